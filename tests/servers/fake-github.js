#!/usr/bin/env node
// A stand-in for the part of GitHub's REST API the Action's pull-request
// comment uses, on loopback, recording every request so that a test can
// state exactly what was asked:
//
//   GET   /repos/OWNER/REPO/pulls/N                 the pull request (head, base)
//   GET   /repos/OWNER/REPO/issues/N/comments       the comments, paginated (per_page, page)
//   POST  /repos/OWNER/REPO/issues/N/comments       {"body"}: creates one
//   PATCH /repos/OWNER/REPO/issues/comments/ID      {"body"}: updates it
//
//   node fake-github.js --token TOKEN --log FILE [--pulls FILE.json] [--comments N]
//     [--lifetime SECONDS]
//
// Every request must carry "Authorization: Bearer TOKEN" (else 401, as
// GitHub answers). --pulls holds {"N": {pull request object}}; --comments N
// seeds N unrelated comments on every issue, so that the client has to page.
// The log has one JSON object per request: method, path, query, whether
// the token was right, the body. It prints PORT=<port> once it listens and
// exits after --lifetime seconds (default 120) or on SIGTERM.
'use strict';

const http = require('http');
const fs = require('fs');

const opts = { token: null, log: null, pulls: null, comments: 0, lifetime: 120 };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, ''), v = process.argv[i + 1];
  if (!(k in opts)) { console.error(`unknown option --${k}`); process.exit(2); }
  opts[k] = k === 'comments' || k === 'lifetime' ? parseInt(v, 10) : v;
}
if (!opts.token || !opts.log) { console.error('--token and --log are required'); process.exit(2); }
const pulls = opts.pulls ? JSON.parse(fs.readFileSync(opts.pulls, 'utf8')) : {};
const comments = new Map(); // issue number -> [{id, body, user}]
let nextId = 1000;

function issueComments(n) {
  if (!comments.has(n)) {
    const seeded = [];
    for (let i = 0; i < opts.comments; i++)
      seeded.push({ id: nextId++, body: `unrelated comment ${i}`, user: { login: 'someone', type: 'User' } });
    comments.set(n, seeded);
  }
  return comments.get(n);
}

function send(res, status, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(status, Object.assign({ 'Content-Type': 'application/json' }, headers));
  res.end(body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://localhost');
    const raw = Buffer.concat(chunks).toString('utf8');
    const authorised = req.headers.authorization === `Bearer ${opts.token}`;
    let body = null;
    try { body = raw ? JSON.parse(raw) : null; } catch (e) { body = { unparsable: raw }; }
    fs.appendFileSync(opts.log, JSON.stringify({
      method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams),
      authorised, has_auth: 'authorization' in req.headers, body,
    }) + '\n');
    if (!authorised) return send(res, 401, { message: 'Bad credentials' });
    let m = url.pathname.match(/^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)$/);
    if (m && req.method === 'GET') {
      const p = pulls[m[1]];
      return p ? send(res, 200, p) : send(res, 404, { message: 'Not Found' });
    }
    m = url.pathname.match(/^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/);
    if (m && req.method === 'GET') {
      const all = issueComments(m[1]);
      const per = Math.min(parseInt(url.searchParams.get('per_page') || '30', 10), 100);
      const page = parseInt(url.searchParams.get('page') || '1', 10);
      const slice = all.slice((page - 1) * per, page * per);
      const headers = {};
      if (page * per < all.length)
        headers.Link = `<http://${req.headers.host}${url.pathname}?per_page=${per}&page=${page + 1}>; rel="next"`;
      return send(res, 200, slice, headers);
    }
    if (m && req.method === 'POST') {
      if (!body || typeof body.body !== 'string') return send(res, 422, { message: 'body is required' });
      const c = { id: nextId++, body: body.body, user: { login: 'github-actions[bot]', type: 'Bot' } };
      issueComments(m[1]).push(c);
      return send(res, 201, c);
    }
    m = url.pathname.match(/^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/);
    if (m && req.method === 'PATCH') {
      for (const list of comments.values())
        for (const c of list)
          if (String(c.id) === m[1]) {
            if (!body || typeof body.body !== 'string') return send(res, 422, { message: 'body is required' });
            c.body = body.body;
            return send(res, 200, c);
          }
      return send(res, 404, { message: 'Not Found' });
    }
    return send(res, 404, { message: 'Not Found' });
  });
});
server.listen(0, '127.0.0.1', () => console.log(`PORT=${server.address().port}`));
setTimeout(() => process.exit(0), opts.lifetime * 1000).unref();
process.on('SIGTERM', () => process.exit(0));
