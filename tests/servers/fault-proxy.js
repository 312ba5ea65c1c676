#!/usr/bin/env node
// A reverse proxy for tests of the retry policy: it fails the first N
// requests (an HTTP status, 503 by default, or a dropped connection) and
// forwards every later one unchanged to --target, Host header included, so
// signatures and WebDAV Destination headers stay valid.
//
//   node fault-proxy.js --target http://127.0.0.1:8080 --fail 3
//        [--status 503 | --reset] [--body TEXT] [--port 0] [--every K]
//        [--no-chunked | --empty-chunked]
//
// --body sends TEXT as the failure's body (application/xml), for example
// an S3 error document, to test how a client explains it.
// --every K fails, after the first N, each K-th request as well (a flaky
// server rather than one that recovers). --no-chunked answers 411 Length
// Required to every request whose body is sent chunked (a server or
// gateway that wants a Content-Length first). --empty-chunked instead
// forwards such a request with an empty body, as Apache does when it
// hands a chunked body to PHP-FPM: the server answers 201 and stores
// nothing. It prints "PORT=<port>" once it
// listens and, on SIGTERM, exits; a request count goes to stderr per
// request so a test can check that retries really happened.
'use strict';

const http = require('http');

function parseArgs(argv) {
  const o = { target: null, fail: 0, status: 503, reset: false, port: 0, every: 0, body: null,
    noChunked: false, emptyChunked: false };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--target') o.target = new URL(next());
    else if (a === '--fail') o.fail = parseInt(next(), 10);
    else if (a === '--status') o.status = parseInt(next(), 10);
    else if (a === '--reset') o.reset = true;
    else if (a === '--port') o.port = parseInt(next(), 10);
    else if (a === '--every') o.every = parseInt(next(), 10);
    else if (a === '--body') o.body = next();
    else if (a === '--no-chunked') o.noChunked = true;
    else if (a === '--empty-chunked') o.emptyChunked = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (!o.target) throw new Error('--target is required');
  return o;
}

const opts = parseArgs(process.argv);
let seen = 0;
let failed = 0;

const server = http.createServer((req, res) => {
  seen++;
  const n = seen;
  const fail = n <= opts.fail ||
    (opts.every > 0 && n > opts.fail && (n - opts.fail) % opts.every === 0);
  if (opts.noChunked && /chunked/i.test(req.headers['transfer-encoding'] || '')) {
    process.stderr.write(`fault-proxy: #${n} ${req.method} ${req.url} -> 411 (chunked)\n`);
    req.resume();
    req.on('end', () => {
      res.writeHead(411, { 'Content-Type': 'text/plain', 'Connection': 'close' });
      res.end('a Content-Length is required\n');
    });
    return;
  }
  if (opts.emptyChunked && /chunked/i.test(req.headers['transfer-encoding'] || '')) {
    process.stderr.write(`fault-proxy: #${n} ${req.method} ${req.url} -> forward, body dropped (chunked)\n`);
    req.resume();
    req.on('end', () => {
      const headers = { ...req.headers, 'content-length': '0' };
      delete headers['transfer-encoding'];
      const up = http.request({ host: opts.target.hostname, port: opts.target.port,
        method: req.method, path: req.url, headers }, (upres) => {
        res.writeHead(upres.statusCode, upres.headers);
        upres.pipe(res);
      });
      up.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
      up.end();
    });
    return;
  }
  if (fail) {
    failed++;
    process.stderr.write(`fault-proxy: #${n} ${req.method} ${req.url} -> ${opts.reset ? 'reset' : opts.status}\n`);
    // Drain the request body first so the client sees the answer, not EPIPE.
    req.resume();
    req.on('end', () => {
      if (opts.reset) {
        req.socket.destroy();
        return;
      }
      if (opts.body !== null) {
        res.writeHead(opts.status, { 'Content-Type': 'application/xml', 'Connection': 'close' });
        res.end(req.method === 'HEAD' ? undefined : opts.body);
      } else {
        res.writeHead(opts.status, { 'Content-Type': 'text/plain', 'Connection': 'close' });
        res.end(req.method === 'HEAD' ? undefined : 'injected failure\n');
      }
    });
    return;
  }
  process.stderr.write(`fault-proxy: #${n} ${req.method} ${req.url} -> forward\n`);
  const up = http.request({
    host: opts.target.hostname,
    port: opts.target.port,
    method: req.method,
    path: req.url,
    headers: req.headers,
  }, (upres) => {
    res.writeHead(upres.statusCode, upres.headers);
    upres.pipe(res);
  });
  up.on('error', (e) => {
    process.stderr.write(`fault-proxy: upstream error ${e.message}\n`);
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(up);
});

server.listen(opts.port, '127.0.0.1', () => {
  process.stdout.write(`PORT=${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  process.stderr.write(`fault-proxy: ${seen} requests, ${failed} failed on purpose\n`);
  process.exit(0);
});
