#!/usr/bin/env bash
# Start or stop the hostile HTTP server (hostile-server.js) on loopback.
#
#   hostile-server.sh start DIR [--lifetime SECONDS]
#   hostile-server.sh stop DIR
#
# `start` prints RS_HOSTILE_URL=http://127.0.0.1:PORT; the server's request
# log is DIR/hostile.log. It exits by itself after --lifetime seconds
# (default 120), so a test that dies cannot leave it running for long.
set -euo pipefail

die() { echo "hostile-server.sh: $*" >&2; exit 1; }
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: hostile-server.sh start|stop DIR [options]"
shift 2
here=$(cd "$(dirname "$0")" && pwd)

if [ "$cmd" = stop ]; then
	if [ -f "$dir/hostile.pid" ]; then
		kill "$(cat "$dir/hostile.pid")" 2>/dev/null || true
		rm -f "$dir/hostile.pid"
	fi
	exit 0
fi
[ "$cmd" = start ] || die "unknown command '$cmd'"
command -v node >/dev/null || die "node is not installed (scripts/install-deps.sh)"
mkdir -p "$dir"
rm -f "$dir/hostile.port"
: >"$dir/hostile.log"
setsid node "$here/hostile-server.js" --log "$dir/hostile.log" "$@" \
	>"$dir/hostile.port" 2>"$dir/hostile.err" </dev/null &
echo $! >"$dir/hostile.pid"
for _ in $(seq 400); do
	grep -q '^PORT=' "$dir/hostile.port" 2>/dev/null && break
	kill -0 "$(cat "$dir/hostile.pid")" 2>/dev/null || die "server exited: $(cat "$dir/hostile.err")"
	sleep 0.05
done
port=$(sed -n 's/^PORT=//p' "$dir/hostile.port")
[ -n "$port" ] || die "server did not report its port"
echo "RS_HOSTILE_URL=http://127.0.0.1:$port"
