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

me=hostile-server.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node-server.sh"
node_server_usage "$@"
shift 2
case $cmd in
stop) node_server_stop "$dir" hostile ;;
start)
	mkdir -p "$dir"
	: >"$dir/hostile.log"
	node_server_start "$dir" hostile server "$dir/hostile.err" RS_HOSTILE_URL \
		"$here/hostile-server.js" --log "$dir/hostile.log" "$@"
	;;
*) die "unknown command '$cmd'" ;;
esac
