#!/bin/bash
# Benchmark of the store and lfs-agent on one large generated session
# (issue 2). Measures, in one run on this machine:
#   references: openssl dgst -sha256, zstd -3 -T1, and git-lfs's own
#               file:// transfer (push and pull) of the same file;
#   ours:       git push and git lfs pull through lfs-agent to a folder
#               remote, stored bytes, and the agent's peak RSS.
# Prints MB/s and ratios; never fails on a target (it is not a test).
#
# usage: bench/agent.sh [BUILD_DIR] [SIZE|FILE]   (defaults: build, 300M)
#        FILE: an existing session (a real one) instead of a generated one
set -euo pipefail

BUILD=$(cd "${1:-build}" && pwd)
SIZE=${2:-300M}
AGENT="$BUILD/lfs-agent/lfs-agent"
GEN="$BUILD/tests/gen-session"
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_agent.XXXXXX")
trap 'rm -rf "$T"' EXIT

. "$(dirname "$0")/lib.sh"
export RESULTS_CACHE_DIR="$T/cache"
bench_home "$T"

secs() { python3 -c "print(f'{$2 - $1:.3f}')"; }
timeit() { # var command...: run, store seconds in var
	local var=$1 t0 t1
	shift
	t0=$(now)
	"$@"
	t1=$(now)
	printf -v "$var" '%s' "$(secs "$t0" "$t1")"
}
mbps() { python3 -c "print(f'{$1 / 1e6 / $2:.0f}')"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

F="$T/run.pyisession"
if [ -f "$SIZE" ]; then
	echo "session: $SIZE"
	cp "$SIZE" "$F"
else
	echo "generating a $SIZE session..."
	"$GEN" --library wide --seed 42 --size "$SIZE" -o "$F"
fi
BYTES=$(stat -c %s "$F")
cat "$F" >/dev/null # warm the page cache for every contender alike

timeit t_sha openssl dgst -sha256 "$F" >/dev/null
timeit t_zstd zstd -q -3 -T1 -f "$F" -o "$T/whole.zst"
# zstd's own CPU seconds (user + system), for the ratio of CPU times
ZSTD_CPU=$( { /usr/bin/time -f '%U %S' zstd -q -3 -T1 -f "$F" -o "$T/whole2.zst" 2>&1 >/dev/null; } |
	awk '{ printf "%.3f", $1 + $2 }')
rm -f "$T/whole2.zst"
ZSTD_BYTES=$(stat -c %s "$T/whole.zst")

# --- git-lfs's own file:// transfer ---------------------------------------------
git init -q --bare "$T/ref.git"
git init -q "$T/ref"
cd "$T/ref"
git lfs track '*.pyisession' >/dev/null
cp "$F" run.pyisession
git add .gitattributes run.pyisession
git commit -qm run
git remote add origin "file://$T/ref.git"
timeit t_ref_push git push -q origin main
GIT_LFS_SKIP_SMUDGE=1 git clone -q "file://$T/ref.git" "$T/ref-clone"
cd "$T/ref-clone"
timeit t_ref_pull git lfs pull

# --- ours --------------------------------------------------------------------
git init -q --bare "$T/ours.git"
git init -q "$T/ours"
cd "$T/ours"
git config lfs.standalonetransferagent results
git config lfs.customtransfer.results.path "$AGENT"
# As 'results init' sets it: one agent process (it uses every core for one
# object) instead of git-lfs starting eight of them one after another.
git config lfs.customtransfer.results.concurrent false
git config results.remote "file://$T/store"
git lfs track '*.pyisession' >/dev/null
cp "$F" run.pyisession
git add .gitattributes run.pyisession
git commit -qm run
git remote add origin "$T/ours.git"
export RESULTS_AGENT_STATS_FILE="$T/agent-push.stats"
timeit t_push git push -q origin main
STORED=$(du -sb "$T/store" | cut -f1)
GIT_LFS_SKIP_SMUDGE=1 git clone -q -c lfs.standalonetransferagent=results \
	-c "lfs.customtransfer.results.path=$AGENT" -c lfs.customtransfer.results.concurrent=false \
	-c "results.remote=file://$T/store" \
	"$T/ours.git" "$T/ours-clone"
cd "$T/ours-clone"
export RESULTS_AGENT_STATS_FILE="$T/agent-pull.stats"
timeit t_pull git lfs pull
cmp "$F" run.pyisession || { echo "pulled file differs!" >&2; exit 1; }
unset RESULTS_AGENT_STATS_FILE
rss() { awk -F'[= ]' '{ if ($2 > m) m = $2 } END { print int(m / 1024) }' "$1"; }
# CPU seconds (user + system) of the agent processes, summed: the measure
# that the load of other processes on the machine distorts least.
cpu() { awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "user_s" || kv[1] == "sys_s") s += kv[2] } } END { printf "%.3f", s }' "$1"; }

echo
echo "session: $BYTES bytes ($SIZE requested), $(nproc) cores"
printf '%-44s %8s s %7s MB/s\n' \
	"openssl dgst -sha256" "$t_sha" "$(mbps "$BYTES" "$t_sha")" \
	"zstd -3 -T1" "$t_zstd" "$(mbps "$BYTES" "$t_zstd")" \
	"git push, git-lfs file:// transfer" "$t_ref_push" "$(mbps "$BYTES" "$t_ref_push")" \
	"git lfs pull, git-lfs file:// transfer" "$t_ref_pull" "$(mbps "$BYTES" "$t_ref_pull")" \
	"git push through lfs-agent" "$t_push" "$(mbps "$BYTES" "$t_push")" \
	"git lfs pull through lfs-agent" "$t_pull" "$(mbps "$BYTES" "$t_pull")"
echo
echo "upload / zstd -3 -T1 time:            $(ratio "$t_push" "$t_zstd")  (target <= 2.0)"
echo "download / git-lfs file:// pull time: $(ratio "$t_pull" "$t_ref_pull")  (target <= 1.1)"
echo "raw / stored bytes:                   $(ratio "$BYTES" "$STORED")  (target >= 40; whole-file zstd -3: $(ratio "$BYTES" "$ZSTD_BYTES"))"
echo "agent peak RSS, push / pull:          $(rss "$T/agent-push.stats") MB / $(rss "$T/agent-pull.stats") MB  (target <= 64)"
echo "agent CPU (user+sys), push / pull:    $(cpu "$T/agent-push.stats") s / $(cpu "$T/agent-pull.stats") s  (zstd -3 -T1: $ZSTD_CPU s)"
echo "load average:                         $(cut -d' ' -f1-3 /proc/loadavg)"
