#!/usr/bin/env node
// A TCP relay that adds a fixed one-way delay to every byte in both
// directions: bench/remotes.sh uses it because this machine's kernel has
// no netem qdisc (tc shapes the rate with tbf; this adds the latency).
// Bytes read from one side are written to the other `delay` ms later, in
// order, so a request/response round trip costs 2 * delay more, which is
// what a long link does to a chatty protocol.
//
//   node delay-relay.js <listen-host> <listen-port> <target-host> <target-port> <delay-ms>
//
// Prints "ready" once it listens. For benchmarks only.
'use strict';

const net = require('net');

const [listenHost, listenPort, targetHost, targetPort, delayArg] = process.argv.slice(2);
const delay = Number(delayArg);
if (!listenHost || !listenPort || !targetHost || !targetPort || !(delay >= 0)) {
  process.stderr.write('usage: delay-relay.js <listen-host> <listen-port> <target-host> <target-port> <delay-ms>\n');
  process.exit(2);
}

// Forward `from` to `to`, each chunk `delay` ms after it arrived. Node runs
// timers of equal timeout in the order they were set, so order is kept.
function pipeDelayed(from, to) {
  let pending = 0;
  let ended = false;
  from.on('data', (chunk) => {
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
}

const server = net.createServer((client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ host: targetHost, port: Number(targetPort) });
  upstream.setNoDelay(true);
  pipeDelayed(client, upstream);
  pipeDelayed(upstream, client);
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
});
server.listen(Number(listenPort), listenHost, () => process.stdout.write('ready\n'));
