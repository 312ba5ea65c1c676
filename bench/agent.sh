#!/bin/bash
# Benchmark of the store and lfs-agent on one large generated session
# (issue 2). Measures, in one run on this machine:
#   references: openssl dgst -sha256, zstd -3 -T1, and git-lfs's own
#               file:// transfer (push and pull) of the same file;
#   ours:       git push and git lfs pull through lfs-agent to a folder
#               remote, stored bytes, and the agent's peak RSS.
# Prints MB/s and ratios; never fails on a target (it is not a test).
#
# usage: [ROUNDS=3] bench/agent.sh [BUILD_DIR] [SIZE|FILE]   (defaults: build, 300M)
#        FILE: an existing session (a real one) instead of a generated one
#        ROUNDS: how many times each is measured (medians are compared)
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

# Each contender is measured ROUNDS times, in turn (zstd, git-lfs's push,
# ours; then the pulls), and the medians are compared: the load of the
# machine then weighs on both alike. Before every pull, a file of three
# times the session is written and deleted, so that each pull is more
# likely to find memory just freed (the guest may still hand it back to
# the host meanwhile: each round's times are printed): on a VM, pages the
# guest has not touched for a while
# cost several times more to fill (writing 224 MB here: 0.68 s of system
# time the first time, 0.06 s the next), and git-lfs's own file:// pull
# writes the object once (it hard-links it from the remote,
# lfshttp/standalone in git-lfs 3.3) where lfs-agent writes it twice (its
# download, then git-lfs's checkout).
ROUNDS=${ROUNDS:-3}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ZSTD_CPU=$( { /usr/bin/time -f '%U %S' zstd -q -3 -T1 -f "$F" -o "$T/whole.zst" 2>&1 >/dev/null; } |
	awk '{ printf "%.3f", $1 + $2 }')
ZSTD_BYTES=$(stat -c %s "$T/whole.zst")

# --- the two clients' repositories, each with the session committed ----------
git init -q "$T/ref"
cd "$T/ref"
git lfs track '*.pyisession' >/dev/null
cp "$F" run.pyisession
git add .gitattributes run.pyisession
git commit -qm run
git init -q "$T/ours"
cd "$T/ours"
git config lfs.standalonetransferagent results
git config lfs.customtransfer.results.path "$AGENT"
# As 'results init' sets it: one agent process (it uses every core for one
# object) instead of git-lfs starting eight of them one after another.
git config lfs.customtransfer.results.concurrent false
git lfs track '*.pyisession' >/dev/null
cp "$F" run.pyisession
git add .gitattributes run.pyisession
git commit -qm run

# pull_into KIND ROUND: delete the last clone, make a new one of KIND's
# (ref or ours) remote of that round, print the seconds of its git lfs pull
LAST_CLONE=
pull_into() {
	local dir="$T/clone.$1.$2" t
	local -a args=("file://$T/ref.$2.git")
	[ "$1" = ref ] || args=(-c lfs.standalonetransferagent=results
		-c "lfs.customtransfer.results.path=$AGENT" -c lfs.customtransfer.results.concurrent=false
		-c "results.remote=file://$T/store.$2" "$T/ours.$2.git")
	cd "$T"
	[ -z "$LAST_CLONE" ] || rm -rf "$LAST_CLONE"
	head -c $((BYTES * 3)) /dev/zero >"$T/ballast"
	rm "$T/ballast"
	GIT_LFS_SKIP_SMUDGE=1 git clone -q "${args[@]}" "$dir"
	LAST_CLONE=$dir
	cd "$dir"
	timeit t git lfs pull
	cmp "$F" run.pyisession || { echo "pulled file differs ($dir)!" >&2; exit 1; }
	echo "$t"
}

for r in $(seq "$ROUNDS"); do
	timeit t openssl dgst -sha256 "$F" >/dev/null
	echo "$t" >>"$T/t_sha"
	timeit t zstd -q -3 -T1 -f "$F" -o "$T/whole.zst"
	echo "$t" >>"$T/t_zstd"
	git init -q --bare "$T/ref.$r.git"
	cd "$T/ref"
	timeit t git push -q "file://$T/ref.$r.git" main
	echo "$t" >>"$T/t_ref_push"
	git init -q --bare "$T/ours.$r.git"
	cd "$T/ours"
	# a new store each round: the object is stored, not found already there
	git config results.remote "file://$T/store.$r"
	RESULTS_AGENT_STATS_FILE="$T/agent-push.$r.stats" timeit t git push -q "$T/ours.$r.git" main
	echo "$t" >>"$T/t_push"
	[ "$r" != 1 ] || STORED=$(du -sb "$T/store.1" | cut -f1)
	pull_into ref "$r" >>"$T/t_ref_pull"
	RESULTS_AGENT_STATS_FILE="$T/agent-pull.$r.stats" pull_into ours "$r" >>"$T/t_pull"
done
t_sha='' t_zstd='' t_ref_push='' t_ref_pull='' t_push='' t_pull=''
for v in t_sha t_zstd t_ref_push t_ref_pull t_push t_pull; do
	printf -v "$v" '%s' "$(median <"$T/$v")"
done
cat "$T"/agent-push.*.stats >"$T/agent-push.stats"
cat "$T"/agent-pull.*.stats >"$T/agent-pull.stats"
rss() { awk -F'[= ]' '{ if ($2 > m) m = $2 } END { print int(m / 1024) }' "$1"; }
cpu() { # the median over the rounds of one agent's user + system seconds
	awk '{ s = 0; for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "user_s" || kv[1] == "sys_s") s += kv[2] } printf "%.3f\n", s }' "$1" | median
}
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
echo "each round, push: $(paste -sd' ' "$T/t_push") s, zstd: $(paste -sd' ' "$T/t_zstd") s"
echo "each round, pull: $(paste -sd' ' "$T/t_pull") s, git-lfs's: $(paste -sd' ' "$T/t_ref_pull") s"
echo "load average:                         $(cut -d' ' -f1-3 /proc/loadavg)"
