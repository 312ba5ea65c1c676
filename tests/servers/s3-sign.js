#!/usr/bin/env node
// An independent SigV4 signer for cross-checking ours: reads one request as
// JSON on stdin, signs it with @smithy/signature-v4 (the AWS SDK's own
// signer) and prints the Authorization and x-amz-date it computed.
//
// Input: {"method","host","path" (already encoded, as sent),
//         "query" (as sent, without '?'), "headers": {name: value},
//         "payloadHash", "region", "service", "time" (Unix seconds),
//         "accessKeyId", "secretAccessKey", "sessionToken"?}
// Output: {"authorization": "...", "amzDate": "..."}
'use strict';

const path = require('path');
module.paths.unshift(path.join(__dirname, 's3', 'node_modules'));
const { SignatureV4 } = require('@smithy/signature-v4');
const { Hash } = require('@smithy/hash-node');

function parseQuery(raw) {
  const query = {};
  if (!raw) return query;
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(pair.slice(eq + 1));
    if (name in query) {
      query[name] = [].concat(query[name], value);
    } else {
      query[name] = value;
    }
  }
  return query;
}

async function sign(input) {
  const signer = new SignatureV4({
    credentials: {
      accessKeyId: input.accessKeyId,
      secretAccessKey: input.secretAccessKey,
      sessionToken: input.sessionToken || undefined,
    },
    region: input.region,
    service: input.service,
    sha256: Hash.bind(null, 'sha256'),
    // S3 signs the path as sent: no second round of encoding.
    uriEscapePath: false,
    applyChecksum: true,
  });
  const headers = { host: input.host };
  for (const [k, v] of Object.entries(input.headers || {})) headers[k.toLowerCase()] = v;
  if (input.payloadHash) headers['x-amz-content-sha256'] = input.payloadHash;
  const [hostname, port] = input.host.split(':');
  const signed = await signer.sign(
    {
      method: input.method,
      protocol: 'http:',
      hostname,
      port: port ? Number(port) : undefined,
      path: input.path,
      query: parseQuery(input.query),
      headers,
    },
    { signingDate: new Date(input.time * 1000) },
  );
  return { authorization: signed.headers.authorization, amzDate: signed.headers['x-amz-date'] };
}

module.exports = { sign, parseQuery };

if (require.main === module) {
  let data = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (c) => {
    data += c;
    if (data.length > 1 << 20) {
      process.stderr.write('s3-sign: input too large\n');
      process.exit(2);
    }
  });
  process.stdin.on('end', () => {
    sign(JSON.parse(data))
      .then((out) => process.stdout.write(JSON.stringify(out) + '\n'))
      .catch((e) => {
        process.stderr.write(`s3-sign: ${e.message}\n`);
        process.exit(1);
      });
  });
}
