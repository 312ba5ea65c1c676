#!/usr/bin/env node
// A hostile HTTP server for tests of the limits a client must keep against
// a server it cannot trust (docs/hardening.md, "Hostile servers"). The
// behaviour is picked by a path segment that names a mode, so one server
// serves every case: a WebDAV remote http://127.0.0.1:PORT/<mode>/store, an
// S3 bucket <mode> (path style) or an Azure container <mode>.
//
//   node hostile-server.js [--port 0] [--lifetime SECONDS] [--log FILE]
//
// Modes:
//   endless     every GET: 200, chunked, a body that never ends
//   oversize    every GET: 206 without a length, far more than the range
//   biglength   every GET: 206 with a Content-Length 16 MiB past the range
//   ignorerange every GET: 200 with the whole 8 MiB object (Range ignored)
//   drip        every GET: 200, Content-Length 1 MiB, then 2 bytes a second
//   silent      never answers (the connection stays open)
//   errendless  every request: 403 with an error body that never ends
//   s3cycle     ListObjectsV2 pages whose continuation tokens go A, B, A...
//   s3endless   ListObjectsV2 pages whose tokens never repeat nor end
//   azcycle     List Blobs pages whose NextMarker goes A, B, A...
//   davhuge     PROPFIND: 207 with a multistatus body that never ends
//   auth401     every request: 401 asking for basic credentials
//   mpu         S3 ListMultipartUploads with stale and fresh uploads;
//               DELETE ?uploadId=... answers 204 and is logged as
//               "ABORT <path> <uploadId>"; PUT answers 200 (a put)
//
// Endless bodies stop after 1 GiB or when the client hangs up; the server
// exits by itself after --lifetime seconds (default 120) or on SIGTERM. It
// prints "PORT=<port>" once it listens; every request is logged as
// "<method> <url>" to --log (default stderr).
'use strict';

const http = require('http');
const fs = require('fs');

const MODES = ['endless', 'oversize', 'biglength', 'ignorerange', 'drip', 'silent', 'errendless',
  's3cycle', 's3endless', 'azcycle', 'davhuge', 'mpu', 'auth401'];
const ENDLESS_LIMIT = 1 << 30;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

const opts = { port: 0, lifetime: 120, log: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const v = process.argv[++i];
  if (a === '--port') opts.port = parseInt(v, 10);
  else if (a === '--lifetime') opts.lifetime = parseInt(v, 10);
  else if (a === '--log') opts.log = v;
  else throw new Error(`unknown option ${a}`);
}
const log = (line) => {
  if (opts.log) fs.appendFileSync(opts.log, line + '\n');
  else process.stderr.write(line + '\n');
};

// Write `body` (a string) forever, or until `limit` bytes, or the client goes.
function endless(res, prefix, piece, limit) {
  let sent = 0;
  let gone = false;
  // How much went out before the client hung up (kernel buffers included).
  res.on('close', () => { gone = true; log(`SENT ${sent}`); });
  if (prefix) { res.write(prefix); sent += prefix.length; }
  const buf = piece ? Buffer.from(piece.repeat(Math.ceil(CHUNK.length / piece.length))) : CHUNK;
  const pump = () => {
    while (!gone && sent < (limit || ENDLESS_LIMIT)) {
      sent += buf.length;
      if (!res.write(buf)) { res.once('drain', pump); return; }
    }
    if (!gone) res.end();
  };
  pump();
}

function asked(req) {
  const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range || '');
  if (!m) return { off: 0, len: 1 << 20 };
  const off = parseInt(m[1], 10);
  return { off, len: m[2] ? parseInt(m[2], 10) - off + 1 : 1 << 20 };
}

function xml(res, status, text) {
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const held = [];
const server = http.createServer((req, res) => {
  log(`${req.method} ${req.url}`);
  const url = new URL(req.url, 'http://x');
  const segs = url.pathname.split('/');
  const mode = segs.find((s) => MODES.includes(s)) || 'none';
  const q = url.searchParams;
  req.resume(); // read and drop any request body

  if (mode === 'silent') { held.push(res); return; }
  if (mode === 'auth401') {
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="hostile"', 'Content-Length': 0 });
    res.end();
    return;
  }
  if (mode === 'errendless') {
    res.writeHead(403, { 'Content-Type': 'application/xml' });
    endless(res, '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>', 'no ');
    return;
  }
  if (req.method === 'HEAD') {
    res.writeHead(200, { 'Content-Length': 1 << 20 });
    res.end();
    return;
  }
  if (mode === 's3cycle' || mode === 's3endless') {
    const tok = q.get('continuation-token');
    let next;
    if (mode === 's3cycle') next = tok === 'A' ? 'B' : 'A';
    else next = 'T' + ((parseInt((tok || 'T0').slice(1), 10) || 0) + 1);
    const prefix = q.get('prefix') || '';
    xml(res, 200, '<?xml version="1.0" encoding="UTF-8"?>' +
      '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      `<Contents><Key>${prefix}k-${next}</Key><Size>1</Size></Contents>` +
      `<IsTruncated>true</IsTruncated><NextContinuationToken>${next}</NextContinuationToken>` +
      '</ListBucketResult>');
    return;
  }
  if (mode === 'azcycle') {
    const marker = q.get('marker');
    const next = marker === 'A' ? 'B' : 'A';
    const prefix = q.get('prefix') || '';
    xml(res, 200, '<?xml version="1.0" encoding="utf-8"?><EnumerationResults>' +
      `<Blobs><Blob><Name>${prefix}k-${next}</Name><Properties><Content-Length>1` +
      '</Content-Length></Properties></Blob></Blobs>' +
      `<NextMarker>${next}</NextMarker></EnumerationResults>`);
    return;
  }
  if (mode === 'davhuge') {
    if (req.method !== 'PROPFIND') { res.writeHead(201); res.end(); return; }
    res.writeHead(207, { 'Content-Type': 'application/xml; charset=utf-8' });
    endless(res, '<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">',
      '<D:response><D:href>/davhuge/store/packs/x</D:href><D:propstat><D:prop>' +
      '<D:getcontentlength>1</D:getcontentlength></D:prop></D:propstat></D:response>');
    return;
  }
  if (mode === 'mpu') {
    if (req.method === 'GET' && q.has('uploads')) {
      const prefix = q.get('prefix') || '';
      const old = new Date(Date.now() - 3 * 24 * 3600 * 1000).toISOString();
      const fresh = new Date(Date.now() - 60 * 1000).toISOString();
      const up = (key, id, when) => `<Upload><Key>${key}</Key><UploadId>${id}</UploadId>` +
        `<Initiated>${when}</Initiated></Upload>`;
      xml(res, 200, '<?xml version="1.0" encoding="UTF-8"?>' +
        '<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
        `<Bucket>mpu</Bucket><Prefix>${prefix}</Prefix><IsTruncated>false</IsTruncated>` +
        up(`${prefix}packs/old.pack`, 'old-1', old) +
        up(`${prefix}packs/fresh.pack`, 'fresh-1', fresh) +
        up(`${prefix}packs/old2.pack`, 'old+2/x', old) +
        up('other/packs/x.pack', 'other-1', old) +
        '</ListMultipartUploadsResult>');
      return;
    }
    if (req.method === 'DELETE' && q.has('uploadId')) {
      log(`ABORT ${url.pathname} ${q.get('uploadId')}`);
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, { ETag: '"0"', 'Content-Length': 0 });
    res.end();
    return;
  }
  if (req.method !== 'GET') { res.writeHead(200, { 'Content-Length': 0 }); res.end(); return; }
  const a = asked(req);
  if (mode === 'endless') {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    endless(res);
  } else if (mode === 'oversize') {
    res.writeHead(206, { 'Content-Type': 'application/octet-stream' });
    endless(res);
  } else if (mode === 'biglength') {
    const n = a.len + (16 << 20);
    res.writeHead(206, { 'Content-Length': n,
      'Content-Range': `bytes ${a.off}-${a.off + n - 1}/*` });
    endless(res, null, null, n);
  } else if (mode === 'ignorerange') {
    const n = 8 << 20;
    const body = Buffer.alloc(n);
    for (let i = 0; i < n; i++) body[i] = (i * 7 + (i >> 11)) & 255;
    res.writeHead(200, { 'Content-Length': n });
    res.end(body);
  } else if (mode === 'drip') {
    res.writeHead(200, { 'Content-Length': 1 << 20 });
    let sent = 0;
    const t = setInterval(() => {
      if (res.destroyed || sent >= (1 << 20)) { clearInterval(t); return; }
      res.write('xx');
      sent += 2;
    }, 1000);
    res.on('close', () => clearInterval(t));
  } else {
    res.writeHead(404, { 'Content-Length': 0 });
    res.end();
  }
});

server.keepAliveTimeout = 1000;
server.listen(opts.port, '127.0.0.1', () => {
  process.stdout.write(`PORT=${server.address().port}\n`);
});
const stop = () => { for (const r of held) r.destroy(); server.close(); process.exit(0); };
setTimeout(stop, opts.lifetime * 1000).unref();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
