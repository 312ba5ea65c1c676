#!/usr/bin/env bash
# Start or stop the fault-injecting proxy (fault-proxy.js) on loopback.
#
#   fault-proxy.sh start DIR --target URL [--fail N] [--status S | --reset] [--body TEXT] [--every K]
#                                         [--no-chunked | --empty-chunked]
#   fault-proxy.sh stop DIR
#
# `start` prints RS_PROXY_URL=http://127.0.0.1:PORT (the proxy fails the
# first N requests, then forwards to URL); its request log is DIR/proxy.log.
set -euo pipefail

die() { echo "fault-proxy.sh: $*" >&2; exit 1; }
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: fault-proxy.sh start|stop DIR [options]"
shift 2
here=$(cd "$(dirname "$0")" && pwd)

if [ "$cmd" = stop ]; then
	if [ -f "$dir/proxy.pid" ]; then
		kill "$(cat "$dir/proxy.pid")" 2>/dev/null || true
		rm -f "$dir/proxy.pid"
	fi
	exit 0
fi
[ "$cmd" = start ] || die "unknown command '$cmd'"
command -v node >/dev/null || die "node is not installed (scripts/install-deps.sh)"
mkdir -p "$dir"
rm -f "$dir/proxy.port"
# setsid: the proxy must not die with the shell that started it.
setsid node "$here/fault-proxy.js" "$@" >"$dir/proxy.port" 2>"$dir/proxy.log" </dev/null &
echo $! >"$dir/proxy.pid"
for _ in $(seq 400); do
	grep -q '^PORT=' "$dir/proxy.port" 2>/dev/null && break
	kill -0 "$(cat "$dir/proxy.pid")" 2>/dev/null || die "proxy exited: $(cat "$dir/proxy.log")"
	sleep 0.05
done
port=$(sed -n 's/^PORT=//p' "$dir/proxy.port")
[ -n "$port" ] || die "proxy did not report its port"
echo "RS_PROXY_URL=http://127.0.0.1:$port"
