#!/usr/bin/env bash
# Start or stop the fake GitHub REST API (fake-github.js) on loopback.
#
#   fake-github.sh start DIR --token TOKEN [--pulls FILE] [--comments N] [--lifetime S]
#   fake-github.sh stop DIR
#
# `start` prints RS_GITHUB_URL=http://127.0.0.1:PORT; the request log is
# DIR/github.log (one JSON object a request).
set -euo pipefail

me=fake-github.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node-server.sh"
start() {
	mkdir -p "$1"
	: >"$1/github.log"
	node_server_start "$1" github "fake GitHub API" "$1/github.err" RS_GITHUB_URL \
		"$here/fake-github.js" --log "$1/github.log" "${@:2}"
}
node_server_main github "$@"
