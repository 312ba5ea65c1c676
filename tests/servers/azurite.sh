#!/usr/bin/env bash
# Start or stop azurite's blob service (Microsoft's Azure Storage emulator,
# npm package pinned in package.json here) on loopback.
#
#   azurite.sh start DIR
#   azurite.sh stop DIR
#
# `start` picks a free port and prints:
#   RS_AZURITE_ENDPOINT=http://127.0.0.1:PORT/devstoreaccount1
#   RS_AZURITE_CONNECTION_STRING=...   (the well-known development account,
#                                       with BlobEndpoint on that port)
# azurite checks SharedKey and SAS signatures, so a wrong key is refused.
# RS_AZURITE_DEBUG=1 makes it log every request to DIR/debug.log.
set -euo pipefail

die() { echo "azurite.sh: $*" >&2; exit 1; }
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: azurite.sh start|stop DIR"
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/node_modules/.bin/azurite-blob

if [ "$cmd" = stop ]; then
	if [ -f "$dir/azurite.pid" ]; then
		pid=$(cat "$dir/azurite.pid")
		kill "$pid" 2>/dev/null || true
		# azurite closes its listener on SIGTERM but may not exit (timers
		# keep node alive): give it a moment, then SIGKILL.
		for _ in $(seq 30); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$dir/azurite.pid"
	fi
	exit 0
fi
[ "$cmd" = start ] || die "unknown command '$cmd'"
[ -x "$bin" ] || die "azurite is not installed: run scripts/install-deps.sh (npm ci in tests/servers)"
mkdir -p "$dir/data"

# The development account's published key (the same in every azurite).
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
for attempt in $(seq 20); do
	port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
	setsid "$bin" --blobHost 127.0.0.1 --blobPort "$port" --location "$dir/data" \
		${RS_AZURITE_DEBUG:+--debug "$dir/debug.log"} >"$dir/azurite.out" 2>&1 </dev/null &
	echo $! >"$dir/azurite.pid"
	for _ in $(seq 400); do
		if grep -q "successfully listen" "$dir/azurite.out" 2>/dev/null; then
			echo "RS_AZURITE_ENDPOINT=http://127.0.0.1:$port/devstoreaccount1"
			echo "RS_AZURITE_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=http://127.0.0.1:$port/devstoreaccount1;'"
			exit 0
		fi
		kill -0 "$(cat "$dir/azurite.pid")" 2>/dev/null || break
		sleep 0.1
	done
	kill "$(cat "$dir/azurite.pid")" 2>/dev/null || true
	grep -q "EADDRINUSE" "$dir/azurite.out" 2>/dev/null || die "azurite did not start: $(cat "$dir/azurite.out")"
done
die "no free port found"
