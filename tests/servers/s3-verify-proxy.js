#!/usr/bin/env node
// A SigV4-verifying proxy in front of s3rver, which does not check V4
// signatures itself. Every request is checked the way S3 checks it, with
// an independent implementation (@smithy/signature-v4, via s3-sign.js):
//   - Authorization present and well-formed      else 403 AccessDenied
//   - access key id known                         else 403 InvalidAccessKeyId
//   - scope region is ours                        else 400 AuthorizationHeaderMalformed
//   - x-amz-date within 15 minutes of our clock   else 403 RequestTimeTooSkewed
//   - x-amz-content-sha256 matches the body       else 400 XAmzContentSHA256Mismatch
//   - signature recomputed over the signed headers matches
//                                                 else 403 SignatureDoesNotMatch
// Then the request goes to s3rver unchanged.
//
// Usage: node s3-verify-proxy.js <listen-port> <upstream-port>
// Environment:
//   S3_PROXY_CREDENTIALS  "id:secret[,id:secret...]" (default S3RVER:S3RVER)
//   S3_PROXY_REGION       region the proxy serves (default us-east-1)
//   S3_PROXY_FAIL_MATCH   requests whose URL contains this get 403 AccessDenied
//   S3_PROXY_SIGNED_ONLY  "1": refuse UNSIGNED-PAYLOAD bodies with 403 (a store
//                         that insists on signed payloads)
//                         after verification (to fail one multipart part)
//   S3_PROXY_LOG          file that gets "METHOD URL STATUS" per request
//   S3_PROXY_CLOCK_OFFSET seconds this proxy's clock is off (to test skew)
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const { sign } = require('./s3-sign.js');

const MAX_BODY = 64 << 20;
const MAX_SKEW_MS = 15 * 60 * 1000;

const listenPort = Number(process.argv[2]);
const upstreamPort = Number(process.argv[3]);
if (!listenPort || !upstreamPort) {
  process.stderr.write('usage: s3-verify-proxy.js <listen-port> <upstream-port>\n');
  process.exit(2);
}
const credentials = new Map(
  (process.env.S3_PROXY_CREDENTIALS || 'S3RVER:S3RVER').split(',').map((p) => {
    const i = p.indexOf(':');
    return [p.slice(0, i), p.slice(i + 1)];
  }),
);
const region = process.env.S3_PROXY_REGION || 'us-east-1';
const failMatch = process.env.S3_PROXY_FAIL_MATCH || '';
const signedOnly = process.env.S3_PROXY_SIGNED_ONLY === '1';
const logFile = process.env.S3_PROXY_LOG || '';
const clockOffsetMs = Number(process.env.S3_PROXY_CLOCK_OFFSET || 0) * 1000;

function log(req, status) {
  if (logFile) fs.appendFileSync(logFile, `${req.method} ${req.url} ${status}\n`);
}

function xmlEscape(s) {
  return String(s).replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function reject(req, res, status, code, message) {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message>` +
    '<RequestId>verify-proxy</RequestId></Error>';
  log(req, `${status} ${code}`);
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function parseAuthorization(value) {
  const m = /^AWS4-HMAC-SHA256 (.*)$/.exec(value || '');
  if (!m) return null;
  const parts = {};
  for (const piece of m[1].split(',')) {
    const kv = piece.trim();
    const eq = kv.indexOf('=');
    if (eq > 0) parts[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  if (!parts.Credential || !parts.SignedHeaders || !parts.Signature) return null;
  const scope = parts.Credential.split('/');
  if (scope.length !== 5 || scope[4] !== 'aws4_request') return null;
  return {
    accessKeyId: scope[0],
    date: scope[1],
    region: scope[2],
    service: scope[3],
    signedHeaders: parts.SignedHeaders.split(';'),
    signature: parts.Signature,
  };
}

function amzDateToMs(s) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s || '');
  if (!m) return NaN;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
}

async function verify(req, res, body) {
  const auth = parseAuthorization(req.headers.authorization);
  if (!auth) return reject(req, res, 403, 'AccessDenied', 'no or malformed AWS4-HMAC-SHA256 Authorization');
  const secret = credentials.get(auth.accessKeyId);
  if (secret === undefined) {
    return reject(req, res, 403, 'InvalidAccessKeyId',
      'The AWS Access Key Id you provided does not exist in our records.');
  }
  if (auth.region !== region) {
    return reject(req, res, 400, 'AuthorizationHeaderMalformed',
      `the region '${auth.region}' is wrong; expecting '${region}'`);
  }
  const t = amzDateToMs(req.headers['x-amz-date']);
  if (Number.isNaN(t)) return reject(req, res, 403, 'AccessDenied', 'no valid x-amz-date');
  if (Math.abs(Date.now() + clockOffsetMs - t) > MAX_SKEW_MS) {
    return reject(req, res, 403, 'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.');
  }
  const mustSign = ['host', 'x-amz-date', 'x-amz-content-sha256'];
  // S3 refuses a session token that is sent but not signed.
  if (req.headers['x-amz-security-token'] !== undefined) mustSign.push('x-amz-security-token');
  for (const h of mustSign) {
    if (!auth.signedHeaders.includes(h)) {
      return reject(req, res, 403, 'AccessDenied', `header '${h}' is not signed`);
    }
  }
  const payloadHash = req.headers['x-amz-content-sha256'];
  if (payloadHash === 'UNSIGNED-PAYLOAD' && signedOnly) {
    return reject(req, res, 403, 'AccessDenied', 'this store accepts signed payloads only');
  }
  if (payloadHash !== 'UNSIGNED-PAYLOAD') {
    const actual = crypto.createHash('sha256').update(body).digest('hex');
    if (actual !== payloadHash) {
      return reject(req, res, 400, 'XAmzContentSHA256Mismatch',
        "The provided 'x-amz-content-sha256' header does not match what was computed.");
    }
  }
  const headers = {};
  for (const h of auth.signedHeaders) {
    if (h === 'host' || h === 'x-amz-content-sha256' || h === 'x-amz-date') continue;
    if (req.headers[h] === undefined) return reject(req, res, 403, 'AccessDenied', `signed header '${h}' missing`);
    headers[h] = req.headers[h];
  }
  const q = req.url.indexOf('?');
  const expected = await sign({
    method: req.method,
    host: req.headers.host,
    path: q < 0 ? req.url : req.url.slice(0, q),
    query: q < 0 ? '' : req.url.slice(q + 1),
    headers,
    payloadHash,
    region: auth.region,
    service: auth.service,
    time: t / 1000,
    accessKeyId: auth.accessKeyId,
    secretAccessKey: secret,
  });
  const m = /Signature=([0-9a-f]{64})/.exec(expected.authorization);
  const wantSigned = /SignedHeaders=([^,]*)/.exec(expected.authorization)[1];
  if (!m || m[1] !== auth.signature || wantSigned !== auth.signedHeaders.join(';')) {
    return reject(req, res, 403, 'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. ' +
      'Check your key and signing method.');
  }
  if (failMatch && req.url.includes(failMatch)) {
    return reject(req, res, 403, 'AccessDenied', 'refused by S3_PROXY_FAIL_MATCH');
  }
  forward(req, res, body);
}

function forward(req, res, body) {
  const up = http.request(
    { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
    (upRes) => {
      log(req, upRes.statusCode);
      res.writeHead(upRes.statusCode, upRes.headers);
      upRes.pipe(res);
    },
  );
  up.on('error', (e) => reject(req, res, 502, 'BadGateway', `upstream: ${e.message}`));
  up.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  let tooBig = false;
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BODY) tooBig = true;
    else chunks.push(c);
  });
  req.on('end', () => {
    if (tooBig) return reject(req, res, 400, 'EntityTooLarge', 'body over the proxy limit');
    verify(req, res, Buffer.concat(chunks)).catch((e) =>
      reject(req, res, 500, 'InternalError', `verify-proxy: ${e.message}`));
  });
});
server.keepAliveTimeout = 30000;
server.listen(listenPort, '127.0.0.1', () => {
  process.stdout.write(`s3-verify-proxy listening on 127.0.0.1:${listenPort} -> ${upstreamPort}\n`);
});
