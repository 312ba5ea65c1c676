#!/usr/bin/env bash
# The first add in a repository recorded before the maps (issue 21): it
# builds the map(s) from every shard. Peak resident memory and time of that
# add and of the next one (which reads one bucket), for histories of each
# size in SIZES built by bench/scale_history.sh with MAP=branches (the
# branch map only: before the commit map) and MAP=0 (neither map).
#
#   RS_BIN_DIR=build bench/first_add.sh          # SIZES="1000 10000", MAPS="branches 0"
#   REUSE=DIR RS_BIN_DIR=build bench/first_add.sh   # a history scale_history.sh built
#                                                   # (instead of SIZES), left where it was
#   RESULTS="a/results b/results" ...            # these builds' binaries, each on the same
#                                                # history (gen-session from RS_BIN_DIR)
#
# Prints one row per history and binary: runs, maps it had, first add (KB,
# s), next add (KB, s), and the first's memory over the next's. Asserts nothing
# (docs/benchmarks.md).
set -euo pipefail

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
RS_BIN_DIR=$(cd "$RS_BIN_DIR" && pwd)
export RS_BIN_DIR
SIZES=${SIZES:-1000 10000}
MAPS=${MAPS:-branches 0}
here=$(cd "$(dirname "$0")" && pwd)
RESULTS=${RESULTS:-$RS_BIN_DIR/src/results}
GEN=$RS_BIN_DIR/tests/gen-session
for r in $RESULTS; do [ -x "$r" ] || { echo "no results at $r" >&2; exit 2; }; done
[ -x "$GEN" ] || { echo "no gen-session under $RS_BIN_DIR" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/tmp}/rs-firstadd.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_home "$W"
export GIT_TERMINAL_PROMPT=0 RUNNER_NAME=bench-runner
unset GITHUB_REF_NAME GITHUB_HEAD_REF RESULTS_RECORDED_AT || true
"$GEN" --seed 2 --samples 400 -o "$W/b.pyisession"
printf '{"population": 1000}\n' >"$W/stats.json"

# add_at BIN EPOCH K: one add of BIN at EPOCH of commit K: "KB seconds"
add_at() {
	env RESULTS_RECORDED_AT="$2" /usr/bin/time -o "$W/time" -f '%M %e' "$1" add "$W/b.pyisession" \
		--commit "$(printf '%040x' "$3")" --branch main --trigger nightly --stats "$W/stats.json" >/dev/null
	cat "$W/time"
}

# measure H: the rows of history H, one per binary (its clone is reset to
# where it was after each)
measure() {
	local h=$1 base maps last first next r
	cd "$h/clone"
	export HOME=$W/home
	base=$(git rev-parse HEAD)
	maps=$(git ls-tree --name-only HEAD index/branches index/commits | sed 's|index/||' | paste -sd+)
	last=$(git log -1 --format=%ct)
	git status --porcelain >/dev/null # the index refreshed: no binary pays for it
	for r in $RESULTS; do
		first=$(add_at "$r" $((last + 10)) 1)
		next=$(add_at "$r" $((last + 20)) 2)
		# (git reports the run's files "not uptodate" in a sparse checkout, and removes them)
		git reset -q --hard "$base" 2>/dev/null || git reset -q --hard "$base"
		[ -z "$(git status --porcelain)" ] || { echo "$h/clone not clean after the reset" >&2; exit 1; }
		# shellcheck disable=SC2086 # $first and $next: "KB seconds", two fields each
		printf '%8s %-16s %10s %7s %10s %7s %6s  %s\n' "$(git rev-list --count HEAD)" "${maps:-none}" \
			$first $next "$(echo "$first $next" | awk '{ printf "%.2f", $1 / $3 }')" "$r"
	done
	cd "$W"
}

echo "# first add before the maps; results $RESULTS; machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%8s %-16s %10s %7s %10s %7s %6s  %s\n' runs maps first_KB s next_KB s ratio binary
if [ -n "${REUSE:-}" ]; then
	measure "$(cd "$REUSE" && pwd)"
	exit 0
fi
for n in $SIZES; do
	for m in $MAPS; do
		MAP=$m "$here/scale_history.sh" "$n" "$W/h$n-$m" >/dev/null
		measure "$W/h$n-$m"
		rm -rf "$W/h$n-$m"
	done
done
