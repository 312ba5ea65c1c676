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
start() {
	mkdir -p "$1"
	: >"$1/hostile.log"
	node_server_start "$1" hostile server "$1/hostile.err" RS_HOSTILE_URL \
		"$here/hostile-server.js" --log "$1/hostile.log" "${@:2}"
}
node_server_main hostile "$@"
