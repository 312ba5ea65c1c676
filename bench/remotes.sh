#!/usr/bin/env bash
# Push and fetch one large generated session through each remote backend
# over an emulated wide-area link, against moving the raw session over the
# same link with plain curl to the same server. Prints MB/s and ratios.
# A benchmark, not a test: it asserts nothing about time.
#
#   sudo bench/remotes.sh [--size 300M] [--backends "s3 webdav azure folder"]
#
# Environment: RS_BIN_DIR (build dir with src/results, lfs-agent and
# tests/gen-session; default <source>/build), RS_BENCH_RATE (100mbit),
# RS_BENCH_DELAY_MS (one-way delay, 10: a 20 ms round trip).
#
# The link. Two network namespaces made here, rsb-cli and rsb-srv, joined
# by a veth pair (10.77.0.1 <-> 10.77.0.2, addresses inside these
# namespaces only). tc tbf limits each direction to RS_BENCH_RATE. This
# machine's kernel has no netem qdisc, so the delay comes from
# bench/delay-relay.js in rsb-srv, which holds every byte RS_BENCH_DELAY_MS
# in each direction before passing it on to the server on rsb-srv's
# loopback. Servers run in rsb-srv; git, git-lfs, lfs-agent, results and
# curl run in rsb-cli, so everything they send crosses the link.
#
# What is timed:
#   push  = `git push` of one commit holding the session (git-lfs hands
#           it to lfs-agent, which chunks, compresses and uploads packs);
#   fetch = `results fetch <commit> -o DIR` in a fresh clone with an empty
#           cache (downloads and reassembles the session);
#   raw   = curl upload (PUT) and download (GET) of the session file itself
#           to the same server over the same link (S3 and WebDAV; Azure
#           needs a signed request for a raw PUT, so its row is compared
#           with the S3 server's raw figures, said so in the output).
# The folder backend has no network in it: its row is the CPU-bound cost
# of the store itself, on this machine's disk.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${RS_BIN_DIR:-$src/build}
RATE=${RS_BENCH_RATE:-100mbit}
DELAY=${RS_BENCH_DELAY_MS:-10}
SIZE=300M
BACKENDS="folder s3 webdav azure"
while [ $# -gt 0 ]; do
	case "$1" in
	--size) SIZE=$2; shift 2 ;;
	--backends) BACKENDS=$2; shift 2 ;;
	-h|--help) sed -n '2,32p' "$0"; exit 0 ;;
	*) echo "remotes.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

die() { echo "remotes.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root for network namespaces and tc (run with sudo)"
for t in ip tc node curl git git-lfs; do command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh)"; done
for b in src/results lfs-agent/lfs-agent tests/gen-session; do
	[ -x "$BIN/$b" ] || die "$BIN/$b is missing: build first or set RS_BIN_DIR"
done

W=$(mktemp -d "${TMPDIR:-/tmp}/rs-bench-remotes.XXXXXX")
CLI="ip netns exec rsb-cli"
SRV="ip netns exec rsb-srv"
relay_pids=()
cleanup() {
	set +e
	for p in "${relay_pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -d "$W/s3" ] && $SRV bash "$src/tests/servers/s3-servers.sh" stop "$W/s3" >/dev/null 2>&1
	[ -d "$W/webdav" ] && $SRV bash "$src/tests/servers/webdav.sh" stop "$W/webdav" >/dev/null 2>&1
	[ -d "$W/azurite" ] && $SRV bash "$src/tests/servers/azurite.sh" stop "$W/azurite" >/dev/null 2>&1
	ip netns del rsb-cli 2>/dev/null
	ip netns del rsb-srv 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT

# --- the link -------------------------------------------------------------------
ip netns del rsb-cli 2>/dev/null || true
ip netns del rsb-srv 2>/dev/null || true
ip netns add rsb-cli
ip netns add rsb-srv
ip link add rsb-c type veth peer name rsb-s
ip link set rsb-c netns rsb-cli
ip link set rsb-s netns rsb-srv
$CLI ip addr add 10.77.0.1/24 dev rsb-c
$SRV ip addr add 10.77.0.2/24 dev rsb-s
for ns in rsb-cli rsb-srv; do ip netns exec $ns ip link set lo up; done
$CLI ip link set rsb-c up
$SRV ip link set rsb-s up
# tbf: the rate, with a bucket a few full-size packets deep and a queue of
# about 50 ms at that rate.
$CLI tc qdisc add dev rsb-c root tbf rate "$RATE" burst 64kb latency 50ms
$SRV tc qdisc add dev rsb-s root tbf rate "$RATE" burst 64kb latency 50ms

# A relay in rsb-srv on 10.77.0.2:<port> adding the delay, to a server
# listening on rsb-srv's 127.0.0.1:<target>. Sets RELAY_PORT.
relay() { # target-port
	RELAY_PORT=$(( 20000 + ${#relay_pids[@]} ))
	RELAY_STATS="$W/relay.$RELAY_PORT.stats"
	$SRV node "$src/bench/delay-relay.js" 10.77.0.2 "$RELAY_PORT" 127.0.0.1 "$1" "$DELAY" "$RELAY_STATS" >"$W/relay.$RELAY_PORT" 2>&1 &
	relay_pids+=($!)
	for _ in $(seq 50); do grep -q ready "$W/relay.$RELAY_PORT" && return 0; sleep 0.1; done
	die "relay on $RELAY_PORT did not start"
}

now() { date +%s.%N; }
# UP_BYTES/DOWN_BYTES: what crossed the current relay so far (0 without one).
RELAY_STATS=
relay_bytes() {
	UP_BYTES=0 DOWN_BYTES=0
	if [ -n "$RELAY_STATS" ] && [ -f "$RELAY_STATS" ]; then
		read -r _ UP_BYTES _ DOWN_BYTES <"$RELAY_STATS"
	fi
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
mbps() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / 1e6 / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

# --- the session and the repositories ------------------------------------------------
"$BIN/tests/gen-session" --seed 42 --size "$SIZE" -o "$W/session.pyisession"
BYTES=$(stat -c %s "$W/session.pyisession")
export HOME="$W/home" GIT_CONFIG_GLOBAL="$W/home/.gitconfig"
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.com
git config --global init.defaultBranch main
unset GIT_DIR GIT_WORK_TREE AWS_PROFILE AWS_SESSION_TOKEN AWS_REGION AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3
SHA=1234567890123456789012345678901234567890

rows=()
raw_s3_up= raw_s3_down=

# push_fetch NAME URL: time git push and results fetch for a remote URL.
push_fetch() {
	local name=$1 url=$2 t0 t1 out
	rm -rf "$W/$name.git" "$W/$name.ci" "$W/$name.dev" "$W/$name.out" "$W/cache"
	git init -q --bare "$W/$name.git"
	git clone -q "$W/$name.git" "$W/$name.ci" 2>/dev/null
	(cd "$W/$name.ci" &&
		$CLI env RESULTS_CACHE_DIR="$W/cache/push" "$BIN/src/results" init --remote "$url" >/dev/null &&
		RESULTS_RECORDED_AT=1764494000 "$BIN/src/results" add "$W/session.pyisession" --commit $SHA --trigger bench >/dev/null) ||
		{ echo "remotes.sh: $name: results init/add failed" >&2; return 1; }
	relay_bytes; before_up=$UP_BYTES
	t0=$(now)
	(cd "$W/$name.ci" && $CLI env RESULTS_CACHE_DIR="$W/cache/push" git push -q origin main) 2>"$W/$name.push.err" ||
		{ tail -3 "$W/$name.push.err" >&2; echo "remotes.sh: $name: push failed" >&2; return 1; }
	t1=$(now)
	PUSH_S=$(secs "$t0" "$t1")
	sleep 0.2; relay_bytes; PUSH_BYTES=$((UP_BYTES - before_up))
	git clone -q "$W/$name.git" "$W/$name.dev" 2>/dev/null
	(cd "$W/$name.dev" && $CLI env RESULTS_CACHE_DIR="$W/cache/fetch" "$BIN/src/results" init >/dev/null) ||
		{ echo "remotes.sh: $name: results init in the clone failed" >&2; return 1; }
	relay_bytes; before_down=$DOWN_BYTES
	t0=$(now)
	out=$(cd "$W/$name.dev" && $CLI env RESULTS_CACHE_DIR="$W/cache/fetch" "$BIN/src/results" fetch 1234567 -o "$W/$name.out" 2>"$W/$name.fetch.err") ||
		{ cat "$W/$name.fetch.err" >&2; echo "remotes.sh: $name: fetch failed" >&2; return 1; }
	t1=$(now)
	FETCH_S=$(secs "$t0" "$t1")
	sleep 0.2; relay_bytes; FETCH_BYTES=$((DOWN_BYTES - before_down))
	cmp -s "$out" "$W/session.pyisession" || { echo "remotes.sh: $name: the fetched session differs" >&2; return 1; }
}

# raw_curl UPLOAD_URL: time a plain PUT and GET of the session file.
raw_curl() {
	local t0 t1
	t0=$(now)
	$CLI curl -sf -o /dev/null -T "$W/session.pyisession" "$1" || die "raw upload to $1 failed"
	t1=$(now)
	RAW_UP_S=$(secs "$t0" "$t1")
	t0=$(now)
	$CLI curl -sf -o "$W/raw.down" "$1" || die "raw download from $1 failed"
	t1=$(now)
	RAW_DOWN_S=$(secs "$t0" "$t1")
	cmp -s "$W/raw.down" "$W/session.pyisession" || die "raw download differs"
	rm -f "$W/raw.down"
}

fail_row() { # name what
	rows+=("$(printf '%-8s %s' "$1" "$2 failed (see above)")")
}

add_row() { # name push fetch raw-up raw-down note
	local moved=-
	[ "${PUSH_BYTES:-0}" -gt 0 ] && moved="$(awk -v u="$PUSH_BYTES" -v d="$FETCH_BYTES" 'BEGIN { printf "%.1f/%.1f", u / 1e6, d / 1e6 }')"
	rows+=("$(printf '%-8s %8s %9s %9s %9s %11s %9s %9s %7s %7s  %s' "$1" \
		"$2" "$(mbps "$BYTES" "$2")" "$3" "$(mbps "$BYTES" "$3")" "$moved" \
		"${4:--}" "${5:--}" \
		"$([ -n "$4" ] && ratio "$4" "$2" || echo -)" "$([ -n "$5" ] && ratio "$5" "$3" || echo -)" "$6")")
}

for backend in $BACKENDS; do
	case "$backend" in
	folder)
		RELAY_STATS=
		push_fetch folder "file://$W/folder-store" || { fail_row folder "push or fetch"; continue; }
		add_row folder "$PUSH_S" "$FETCH_S" "" "" "local disk, no link"
		;;
	s3)
		S3_TEST_BUCKETS=results-bench $SRV bash "$src/tests/servers/s3-servers.sh" start "$W/s3" >"$W/s3.env"
		s3port=$(sed -n 's|^S3RVER_URL=http://127.0.0.1:||p' "$W/s3.env")
		relay "$s3port"
		export AWS_ENDPOINT_URL="http://10.77.0.2:$RELAY_PORT" AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
		raw_curl "http://10.77.0.2:$RELAY_PORT/results-bench/raw/session.pyisession"
		raw_s3_up=$RAW_UP_S raw_s3_down=$RAW_DOWN_S
		push_fetch s3 "s3://results-bench/store" || { fail_row s3 "push or fetch"; continue; }
		add_row s3 "$PUSH_S" "$FETCH_S" "$RAW_UP_S" "$RAW_DOWN_S" "s3rver"
		;;
	webdav)
		if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
			echo "webdav: nginx not installed, skipped" >&2; continue
		fi
		eval "$($SRV bash "$src/tests/servers/webdav.sh" start "$W/webdav")"
		relay "$(echo "$RS_WEBDAV_URL" | sed -n 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|p')"
		raw_curl "http://10.77.0.2:$RELAY_PORT/raw.pyisession"
		push_fetch webdav "http://10.77.0.2:$RELAY_PORT/store" || { fail_row webdav "push or fetch"; continue; }
		add_row webdav "$PUSH_S" "$FETCH_S" "$RAW_UP_S" "$RAW_DOWN_S" "nginx"
		;;
	azure)
		if [ ! -x "$src/tests/servers/node_modules/.bin/azurite-blob" ]; then
			echo "azure: azurite not installed, skipped" >&2; continue
		fi
		eval "$($SRV bash "$src/tests/servers/azurite.sh" start "$W/azurite")"
		relay "$(echo "$RS_AZURITE_ENDPOINT" | sed -n 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|p')"
		AZURE_STORAGE_CONNECTION_STRING=$(echo "$RS_AZURITE_CONNECTION_STRING" | sed "s|127.0.0.1:[0-9]*|10.77.0.2:$RELAY_PORT|")
		export AZURE_STORAGE_CONNECTION_STRING
		push_fetch azure "azure://devstoreaccount1/bench/store" || { fail_row azure "push or fetch"; continue; }
		add_row azure "$PUSH_S" "$FETCH_S" "$raw_s3_up" "$raw_s3_down" "azurite; raw = the s3 row's curl"
		;;
	*) die "unknown backend '$backend'" ;;
	esac
done

echo
echo "session: $BYTES bytes; link: $RATE each way (tc tbf), ${DELAY} ms each way by the relay ($((2 * DELAY)) ms round trip)"
printf '%-8s %8s %9s %9s %9s %11s %9s %9s %7s %7s  %s\n' backend push_s push_MB/s fetch_s fetch_MB/s moved_MB raw_up_s raw_dn_s up_x down_x note
for r in "${rows[@]}"; do echo "$r"; done
echo "(MB/s = session bytes / time; moved_MB = bytes that crossed the link up during push / down during fetch;"
echo " up_x = raw upload time / push time; down_x = raw download time / fetch time)"
