#!/usr/bin/env node
// A TCP relay that adds a fixed one-way delay to every byte in both
// directions: bench/remotes.sh uses it because this machine's kernel has
// no netem qdisc (tc shapes the rate with tbf; this adds the latency).
// Bytes read from one side are written to the other `delay` ms later, in
// order, so a request/response round trip costs 2 * delay more, which is
// what a long link does to a chatty protocol.
//
//   node delay-relay.js <listen-host> <listen-port> <target-host> <target-port> <delay-ms> [stats-file]
//
// Prints "ready" once it listens. With a stats file, it rewrites it with
// "up <bytes to the server> down <bytes to the client>" (totals so far)
// whenever a connection closes, so a benchmark can tell the bytes that
// crossed the link. For benchmarks only.
'use strict';

const net = require('net');

const fs = require('fs');

const [listenHost, listenPort, targetHost, targetPort, delayArg, statsFile] = process.argv.slice(2);
const totals = { up: 0, down: 0 };
const delay = Number(delayArg);
if (!listenHost || !listenPort || !targetHost || !targetPort || !(delay >= 0)) {
  process.stderr.write('usage: delay-relay.js <listen-host> <listen-port> <target-host> <target-port> <delay-ms>\n');
  process.exit(2);
}

// Forward `from` to `to`, each chunk `delay` ms after it arrived. Node runs
// timers of equal timeout in the order they were set, so order is kept.
function pipeDelayed(from, to, direction) {
  let pending = 0;
  let ended = false;
  from.on('data', (chunk) => {
    totals[direction] += chunk.length;
    pending++;
    setTimeout(() => {
      pending--;
      if (!to.destroyed) to.write(chunk);
      if (ended && pending === 0) to.end();
    }, delay);
  });
  from.on('end', () => {
    ended = true;
    if (pending === 0) setTimeout(() => to.end(), delay);
  });
  from.on('error', () => to.destroy());
  to.on('error', () => from.destroy());
}

const server = net.createServer((client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ host: targetHost, port: Number(targetPort) });
  upstream.setNoDelay(true);
  pipeDelayed(client, upstream, 'up');
  pipeDelayed(upstream, client, 'down');
  client.on('close', () => {
    if (statsFile) fs.writeFileSync(statsFile, `up ${totals.up} down ${totals.down}\n`);
  });
  // An orderly close travels as 'end' (after the delayed bytes); only a
  // failed side tears the other down, so an idle keep-alive timeout of the
  // server cannot cut a response that is still crossing the slow link.
  upstream.on('close', (hadError) => { if (hadError) client.destroy(); });
  client.on('close', (hadError) => { if (hadError) upstream.destroy(); });
});
server.listen(Number(listenPort), listenHost, () => process.stdout.write('ready\n'));
