// Preloaded into s3rver (`node -r`) by s3-servers.sh.
//
// s3rver 3.7.1's FilesystemStore answers a PUT (object or part) once it has
// READ the request body, not once the object file is WRITTEN: its
// fs.createWriteStream is never awaited, and HEAD/GET take the size from
// fs.stat of that file. So a HEAD right after a PUT can see a short or
// empty object on a loaded machine: test_s3_remote's test_stream saw size 0
// for a 4000-byte PUT on a fresh Debian 12 root (Node.js 18), one run in
// three. Here every store method that writes files waits until the write
// streams it opened are closed (30 s at most) before it returns, so the
// answer to a PUT comes after the bytes are in the file.
//
// S3RVER_SLOW_WRITES_MS (tests only) delays every file write by that many
// milliseconds, to make the race certain: tests/e2e/test_s3rver_put.sh.
// S3RVER_DURABLE_PUT=0 leaves s3rver as it is (to see that test fail).
'use strict';
const path = require('path');

const dir = path.join(__dirname, 's3', 'node_modules', 's3rver');
const fs = require(require.resolve('fs-extra', { paths: [dir] }));
const FilesystemStore = require(path.join(dir, 'lib', 'stores', 'filesystem.js'));
const DEADLINE_MS = 30000;
const slowMs = parseInt(process.env.S3RVER_SLOW_WRITES_MS || '0', 10);
const durable = process.env.S3RVER_DURABLE_PUT !== '0';

const open = new Set();
const createWriteStream = fs.createWriteStream;
fs.createWriteStream = function (...args) {
  const s = createWriteStream.apply(this, args);
  if (slowMs > 0) {
    const write = s._write.bind(s);
    s._write = (chunk, enc, cb) => setTimeout(() => write(chunk, enc, cb), slowMs);
  }
  open.add(s);
  const done = () => open.delete(s);
  s.once('close', done);
  s.once('error', done);
  return s;
};

function closed(streams) {
  return Promise.all(streams.map((s) => new Promise((resolve) => {
    if (!open.has(s)) return resolve();
    s.once('close', resolve);
    s.once('error', resolve);
  })));
}

if (durable) {
  for (const name of ['putObject', 'putPart', 'copyObject']) {
    const orig = FilesystemStore.prototype[name];
    if (typeof orig !== 'function') {
      throw new Error(`s3rver-durable-put: s3rver has no FilesystemStore.${name}; update this patch`);
    }
    FilesystemStore.prototype[name] = async function (...args) {
      const before = new Set(open);
      const result = await orig.apply(this, args);
      const mine = [...open].filter((s) => !before.has(s));
      let timer;
      const late = new Promise((resolve) => { timer = setTimeout(resolve, DEADLINE_MS); });
      await Promise.race([closed(mine), late]);
      clearTimeout(timer);
      return result;
    };
  }
}
