#!/usr/bin/env bash
# `results add` in two clones of different sizes (issue 21: the add at
# 100,000 runs within 1.5x of the add at 1,000): ADDS (default 20) adds in
# each, one in each in turn (so that both see the same load), each 10 s
# after its clone's last commit (late in its history's last month), and
# the medians of their wall time and CPU time (perf stat task-clock: what
# the add itself spends, which the load of other processes on the machine
# inflates far less than the wall time), then the ratios SECOND / FIRST; and, as a reference, git's
# own update of each clone's index for one new file.
#
#   RS_BIN_DIR=build bench/add_cpu.sh SMALL_CLONE LARGE_CLONE
#
# The clones are work trees of results repositories (bench/scale_history.sh's
# DIR/clone, or the clone bench/devclone.sh makes in DIR/devclone-bench/dev);
# each add commits in them: use copies. Asserts nothing.
#
# INIT_SPARSE=1 first runs `results init --sparse` in each clone (what the
# GitHub Action does in its full checkout: the work tree and sparse index
# of `results clone`) and prints its own time, then the adds.
set -euo pipefail

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
[ $# = 2 ] || { echo "usage: RS_BIN_DIR=build $0 SMALL_CLONE LARGE_CLONE" >&2; exit 2; }
RESULTS=$(cd "$RS_BIN_DIR" && pwd)/src/results
GEN=$(cd "$RS_BIN_DIR" && pwd)/tests/gen-session
ADDS=${ADDS:-20}
command -v perf >/dev/null || { echo "perf is needed (linux-perf)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/rs-addcpu.XXXXXX")
trap 'rm -rf "$W"' EXIT
export GIT_TERMINAL_PROMPT=0 RUNNER_NAME=bench-runner
unset GITHUB_REF_NAME GITHUB_HEAD_REF RESULTS_RECORDED_AT || true
"$GEN" --seed 2 --samples 400 -o "$W/b.pyisession"
printf '{"population": 1000}\n' >"$W/stats.json"

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one_add CLONE K: one add in it; prints "wall cpu"
one_add() {
	local t0 t1 last
	last=$(git -C "$1" log -1 --format=%ct)
	t0=$(now)
	(cd "$1" && RESULTS_RECORDED_AT=$((last + 10)) perf stat -x, -e task-clock -o "$W/perf" \
		"$RESULTS" add "$W/b.pyisession" --commit "$(printf '%040x' "$(($2 + 7000))")" \
		--branch main --trigger nightly --stats "$W/stats.json" >/dev/null 2>"$W/err") ||
		{ cat "$W/err" >&2; exit 1; }
	t1=$(now)
	echo "$(echo "$t1 - $t0" | bc -l) $(awk -F, '$3 == "task-clock" { print $1 / 1000 }' "$W/perf")"
}
# medians FILE: "wall cpu"
medians() { echo "$(cut -d' ' -f1 "$1" | median) $(cut -d' ' -f2 "$1" | median)"; }
index_kind() { # sparse, or the version of the full index
	if python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); sys.exit(b"sdir" not in b[-40:])' \
		"$1/.git/index"; then
		echo "sparse index"
	else
		echo "full index v$(od -An -tu1 -j7 -N1 "$1/.git/index" | tr -d ' ')"
	fi
}

# init_sparse CLONE: `results init --sparse` in it, its wall and CPU time
init_sparse() {
	local t0 t1
	t0=$(now)
	(cd "$1" && perf stat -x, -e task-clock -o "$W/perf" "$RESULTS" init --sparse >"$W/out" 2>"$W/err") ||
		{ cat "$W/out" "$W/err" >&2; exit 1; }
	t1=$(now)
	printf '%-60s %7.3f s wall %7.3f s CPU  results init --sparse (%s)\n' "$1" \
		"$(echo "$t1 - $t0" | bc -l)" "$(awk -F, '$3 == "task-clock" { print $1 / 1000 }' "$W/perf")" \
		"$(sed -n 's/^sparse: *\([a-z]*\).*/\1/p' "$W/out")"
}

echo "# results add, medians of $ADDS; load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${INIT_SPARSE:-0}" = 1 ]; then
	init_sparse "$1"
	init_sparse "$2"
fi
# The reference: git's own update of that index for one new file (`git
# update-index --add`, which rewrites .git/index as any git command that
# stages does), medians of 5, the file then taken out again.
git_index_ref() {
	local k t0 t1
	: >"$W/ref"
	for k in 1 2 3 4 5; do
		echo "$k" >"$1/rs-bench-ref-file"
		t0=$(now)
		git -C "$1" update-index --add rs-bench-ref-file
		t1=$(now)
		echo "$t1 - $t0" | bc -l >>"$W/ref"
		git -C "$1" update-index --force-remove rs-bench-ref-file
		rm -f "$1/rs-bench-ref-file"
	done
	median <"$W/ref"
}
r1=$(git_index_ref "$1")
r2=$(git_index_ref "$2")
printf 'reference, git update-index --add of one file: %.3f s and %.3f s (x%.2f)\n' "$r1" "$r2" \
	"$(echo "$r2 / $r1" | bc -l)"
# the two clones' adds alternate, so that both see the same load on the machine
: >"$W/t1"
: >"$W/t2"
for k in $(seq 1 "$ADDS"); do
	one_add "$1" "$k" >>"$W/t1"
	one_add "$2" "$k" >>"$W/t2"
done
read -r w1 c1 < <(medians "$W/t1")
read -r w2 c2 < <(medians "$W/t2")
printf '%-60s %7.3f s wall %7.3f s CPU  (%s, %d KB .git/index)\n' "$1" "$w1" "$c1" \
	"$(index_kind "$1")" "$(( $(stat -c %s "$1/.git/index") / 1024 ))"
printf '%-60s %7.3f s wall %7.3f s CPU  (%s, %d KB .git/index)\n' "$2" "$w2" "$c2" \
	"$(index_kind "$2")" "$(( $(stat -c %s "$2/.git/index") / 1024 ))"
printf 'second / first: x%.2f wall, x%.2f CPU (target: within 1.5x); load %s\n' \
	"$(echo "$w2 / $w1" | bc -l)" "$(echo "$c2 / $c1" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
