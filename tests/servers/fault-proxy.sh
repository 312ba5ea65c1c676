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

me=fault-proxy.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node-server.sh"
# its stderr is the request log
start() { node_server_start "$1" proxy proxy "$1/proxy.log" RS_PROXY_URL "$here/fault-proxy.js" "${@:2}"; }
node_server_main proxy "$@"
