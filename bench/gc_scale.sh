#!/usr/bin/env bash
# gc --dry-run and verify on a long history (issue 21): how they grow with
# the runs, and with refs at distinct commits.
#
#   RS_BIN_DIR=build bench/gc_scale.sh DIR [BASE_BIN_DIR]
#
# DIR is a history made by bench/scale_history.sh (DIR/clone, DIR/home,
# DIR/remote.git). A second branch, `other`, is pushed at the commit a
# tenth of the runs before main's tip, so that two refs at distinct
# commits share nearly every run. Prints, for `results gc --dry-run` and
# `results verify`, the seconds with one ref and with two, each against
# `git rev-list --count HEAD` in the same clone (a reference measured in
# the same run: one walk of the history); with BASE_BIN_DIR, the same
# commands of another build (main's) on the same repository. Asserts
# nothing; figures are for reading (docs/benchmarks.md).
set -euo pipefail

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
DIR=${1:?usage: RS_BIN_DIR=build $0 DIR [BASE_BIN_DIR]}
BASE=${2:-}
NEW=$(cd "$RS_BIN_DIR" && pwd)/src/results
[ -z "$BASE" ] || BASE=$(cd "$BASE" && pwd)/src/results
export HOME=$DIR/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
cd "$DIR/clone"

now() { date +%s.%N; }
timed() { # seconds of the command line, output discarded
	local t0 t1
	t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
	echo "$t1 - $t0" | bc -l
}
runs=$(git rev-list --count HEAD)
ref=$(timed git rev-list --count HEAD)
row() { # name seconds
	printf '%-34s %8.2f s   x%8.1f git rev-list --count\n' "$1" "$2" "$(echo "$2 / $ref" | bc -l)"
}
echo "# gc and verify at $runs commits ($DIR)"
printf '%-34s %8.2f s\n' "reference: git rev-list --count" "$ref"
git push -q origin --delete other 2>/dev/null || true
git fetch -q origin
for refs in 1 2; do
	if [ "$refs" = 2 ]; then
		git push -q --no-verify origin "HEAD~$((runs / 10)):refs/heads/other" 2>/dev/null
		git fetch -q origin
	fi
	row "gc --dry-run, $refs ref(s)" "$(timed "$NEW" gc --dry-run --no-fetch)"
	row "verify, $refs ref(s)" "$(timed "$NEW" verify)"
	if [ -n "$BASE" ]; then
		row "base gc --dry-run, $refs ref(s)" "$(timed "$BASE" gc --dry-run --no-fetch)"
		row "base verify, $refs ref(s)" "$(timed "$BASE" verify)"
	fi
done
git push -q origin --delete other 2>/dev/null || true
