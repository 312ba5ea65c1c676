#!/usr/bin/env bash
# Start or stop the S3 test servers on loopback:
#   s3rver (pinned in tests/servers/s3/package-lock.json) on a free port,
#   with the buckets named in S3_TEST_BUCKETS (default "results-test"),
#   and s3-verify-proxy.js in front of it, which rejects bad signatures.
#
#   s3-servers.sh start <statedir>   # writes <statedir>/env, prints it
#   s3-servers.sh stop <statedir>
#
# <statedir>/env sets S3RVER_URL (no signature check), S3_VERIFY_URL
# (signatures checked), S3_SKEWED_URL (checked by a clock one hour
# ahead), S3_FAILPART_URL (refuses multipart part 2; its request log is
# S3_FAILPART_LOG), S3_SIGNED_URL (refuses UNSIGNED-PAYLOAD bodies; log
# S3_SIGNED_LOG) and S3RVER_PID. The access key is s3rver's fixed
# S3RVER/S3RVER. s3rver comes from scripts/install-deps.sh (or S3RVER_BIN);
# when it is missing this fails (exit 1), and so do the suites that need it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
state=${2:-}
[ -n "$cmd" ] && [ -n "$state" ] || { echo "usage: $0 start|stop <statedir>" >&2; exit 2; }

free_port() {
	node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

wait_port() { # port pid name
	local i
	for i in $(seq 1 100); do
		if curl -s -o /dev/null "http://127.0.0.1:$1/" 2>/dev/null; then
			return 0
		fi
		kill -0 "$2" 2>/dev/null || { echo "$3 exited; its log:" >&2; cat "$state/$3.log" >&2; return 1; }
		sleep 0.1
	done
	echo "$3 did not start listening on $1" >&2
	return 1
}

case "$cmd" in
start)
	command -v node >/dev/null || { echo "node is needed for the S3 test servers (scripts/install-deps.sh)" >&2; exit 1; }
	# S3RVER_BIN points elsewhere (a test of this failure uses a missing one).
	s3rver=${S3RVER_BIN:-$here/s3/node_modules/.bin/s3rver}
	if [ ! -x "$s3rver" ]; then
		echo "s3-servers.sh: s3rver is not installed at '$s3rver' (run scripts/install-deps.sh);" \
			"the S3 tests cannot run and fail" >&2
		exit 1
	fi
	mkdir -p "$state/data"
	s3port=$(free_port)
	buckets=()
	for b in ${S3_TEST_BUCKETS:-results-test}; do
		buckets+=(--configure-bucket "$b")
	done
	# s3rver makes ListObjectsV2 continuation tokens with DES, which
	# OpenSSL 3 keeps in its legacy provider.
	# s3rver-durable-put.js: a PUT is answered once its bytes are in the file.
	node --openssl-legacy-provider -r "$here/s3rver-durable-put.js" "$s3rver" -d "$state/data" -a 127.0.0.1 -p "$s3port" \
		--silent --no-vhost-buckets --service-endpoint localhost "${buckets[@]}" >"$state/s3rver.log" 2>&1 &
	s3pid=$!
	echo "$s3pid" >"$state/s3rver.pid"
	wait_port "$s3port" "$s3pid" s3rver
	start_proxy() { # name, then VAR=value settings for it
		local name=$1 port pid
		shift
		port=$(free_port)
		env S3_PROXY_LOG="$state/$name.requests" "$@" \
			node "$here/s3-verify-proxy.js" "$port" "$s3port" >"$state/$name.log" 2>&1 &
		pid=$!
		echo "$pid" >"$state/$name.pid"
		wait_port "$port" "$pid" "$name"
		proxy_port=$port
	}
	start_proxy s3-verify-proxy
	verify_port=$proxy_port
	# The same checks with a clock one hour ahead, and one that refuses
	# part 2 of every multipart upload (after checking its signature).
	start_proxy s3-skewed-proxy S3_PROXY_CLOCK_OFFSET=3600
	skewed_port=$proxy_port
	start_proxy s3-failpart-proxy S3_PROXY_FAIL_MATCH=partNumber=2
	failpart_port=$proxy_port
	# And one that refuses UNSIGNED-PAYLOAD bodies.
	start_proxy s3-signed-proxy S3_PROXY_SIGNED_ONLY=1
	signed_port=$proxy_port
	cat >"$state/env" <<EOF
S3RVER_URL=http://127.0.0.1:$s3port
S3_VERIFY_URL=http://127.0.0.1:$verify_port
S3_SKEWED_URL=http://127.0.0.1:$skewed_port
S3_FAILPART_URL=http://127.0.0.1:$failpart_port
S3_FAILPART_LOG=$state/s3-failpart-proxy.requests
S3_SIGNED_URL=http://127.0.0.1:$signed_port
S3_SIGNED_LOG=$state/s3-signed-proxy.requests
S3RVER_PID=$s3pid
EOF
	cat "$state/env"
	;;
stop)
	for f in "$state"/s3-*-proxy.pid "$state/s3rver.pid"; do
		if [ -f "$f" ]; then
			kill "$(cat "$f")" 2>/dev/null || true
			rm -f "$f"
		fi
	done
	;;
*)
	echo "usage: $0 start|stop <statedir>" >&2
	exit 2
	;;
esac
