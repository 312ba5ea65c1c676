#!/usr/bin/env bash
# Scale benchmark (issues 5 and 21): results repositories of 1,000, 10,000
# and 100,000 recorded runs, and how the everyday commands behave on them.
#
#   RS_BIN_DIR=build bench/scale.sh                   # SIZES="1000 10000 100000"
#   SIZES="1000 10000" ADDS=5 RS_BIN_DIR=build bench/scale.sh   # quicker
#   REUSE_100000=DIR ...   # a history bench/scale_history.sh built before
#                          # (with LAST_MONTH_RUNS=$BUSY), reset to its tip
#
# Each history is built by bench/scale_history.sh (a real session's
# run.json, 50 runs a day, three configurations nightly plus pull
# requests, a 10% step half-way) with its last month holding BUSY runs
# (default 1,000, or all but one). Then, on the clone (sparse checkout):
#   - results add, ADDS times (default 20) late in that busy month and
#     ADDS times early in the next (a new month): the medians, and the
#     bytes of new git objects of one add commit of each;
#   - list, check, trend with their default windows (medians of 3);
#   - site into a new folder (--limit 1000), then one more add, then site
#     again into the same folder: the incremental build;
#   - one more add, the first run of a new pull-request branch, and check
#     (its window is empty: the branch map says so, src/runs/branchmap.h);
#   - the GitHub Action's pull-request path (docs/github-action/run.sh), on
#     the history as built: check of the newest run --baseline an old
#     commit (the oldest shard's last) and a recent one (the 30th newest run's),
#     compare of the old one and the newest run, the nearest profiled
#     commit of 500 candidates whose last only is profiled (list
#     --first-profiled, through the commit map), and what the action did
#     for it before: list --json --limit 0 (every run);
#   - results add, ADDS times late in the busy month, in the clone the
#     docs and the GitHub Action's input `clone` make (`results clone` of
#     the history's remote: shallow, partial, git's sparse index): the
#     median (add_devclone);
#   - references measured in the same run: git rev-parse HEAD, git log -1
#     (process start-up included), and git status (which reads .git/index,
#     as add must).
# Prints each figure and its ratio to the first size's and to the
# references. Asserts nothing: figures are for reading (docs/benchmarks.md).
set -euo pipefail

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
RS_BIN_DIR=$(cd "$RS_BIN_DIR" && pwd)
export RS_BIN_DIR
SIZES=${SIZES:-1000 10000 100000}
ADDS=${ADDS:-20}
BUSY=${BUSY:-1000}
here=$(cd "$(dirname "$0")" && pwd)
RESULTS=$RS_BIN_DIR/src/results
GEN=$RS_BIN_DIR/tests/gen-session
[ -x "$RESULTS" ] && [ -x "$GEN" ] || { echo "no results or gen-session under $RS_BIN_DIR" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/tmp}/rs-scale.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_home "$W"
export GIT_TERMINAL_PROMPT=0 RUNNER_NAME=bench-runner
unset GITHUB_REF_NAME GITHUB_HEAD_REF RESULTS_RECORDED_AT || true

# seconds taken by the command line (output discarded)
timed() {
	local t0 t1
	t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
	echo "$t1 - $t0" | bc -l
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# median of 3 runs of the command line
timed3() { for _ in 1 2 3; do timed "$@"; done | median; }
new_bytes() { # bytes of the objects commit $1 adds
	git rev-list --objects "$1" --not "$1^" | cut -d' ' -f1 |
		git cat-file --batch-check='%(objectsize)' | awk '{ s += $1 } END { print s + 0 }'
}
add_at() { # add_at EPOCH K: one results add recorded at EPOCH, timed
	timed env RESULTS_RECORDED_AT="$1" "$RESULTS" add "$W/b.pyisession" \
		--commit "$(printf '%040x' "$2")" --branch main --trigger nightly --stats "$W/stats.json"
}

echo "# scale benchmark: sizes $SIZES, $ADDS adds each, busy month of $BUSY runs; work dir $W"
echo "# machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$GEN" --seed 2 --samples 400 -o "$W/b.pyisession"
printf '{"population": 1000}\n' >"$W/stats.json"

declare -A F   # F[name,size] = seconds or bytes
names=(ref_revparse ref_log ref_status add_late add_early add_devclone bytes_late bytes_early list check trend site_full site_incr check_first_pr
	pr_check_old pr_check_recent pr_compare_old pr_nearest pr_list_all)
json_field() { python3 -c 'import json,sys; v=json.load(sys.stdin); print(eval("v" + sys.argv[1]))' "$1"; }
for n in $SIZES; do
	busy=$((BUSY < n ? BUSY : n - 1))
	reuse_var=REUSE_$n
	if [ -n "${!reuse_var:-}" ]; then
		H=${!reuse_var}
		git -C "$H/clone" reset -q --hard refs/remotes/origin/main
	else
		H=$W/h$n
		LAST_MONTH_RUNS=$busy "$here/scale_history.sh" "$n" "$H"
	fi
	cd "$H/clone"
	export HOME=$W/home
	F[ref_revparse,$n]=$(timed3 git rev-parse HEAD)
	F[ref_log,$n]=$(timed3 git log -1 --format=%H)
	F[ref_status,$n]=$(timed3 git status --porcelain)
	F[list,$n]=$(timed3 "$RESULTS" list)
	F[check,$n]=$(timed3 "$RESULTS" check)
	F[trend,$n]=$(timed3 "$RESULTS" trend)
	# the action's pull-request path
	newest=$("$RESULTS" list --json --limit 1 | json_field '[0]["id"]')
	oldest_shard=$(git ls-tree -r --name-only HEAD index/ | grep -vE '^index/(branches|commits)/' | sort | head -1)
	old_c=$(git show "HEAD:$oldest_shard" | tail -1 | json_field '["commit"]')
	recent_c=$("$RESULTS" list --json --limit 30 | json_field '[-1]["commit"]')
	for k in $(seq 1 499); do printf '%040x\n' $((k * 7919 + n)); done >"$W/cand$n"
	echo "$old_c" >>"$W/cand$n"
	F[pr_check_old,$n]=$(timed3 "$RESULTS" check "$newest" --baseline "$old_c")
	F[pr_check_recent,$n]=$(timed3 "$RESULTS" check "$newest" --baseline "$recent_c")
	F[pr_compare_old,$n]=$(timed3 "$RESULTS" compare "$old_c" "$newest")
	F[pr_nearest,$n]=$(timed3 "$RESULTS" list --first-profiled "$W/cand$n")
	F[pr_list_all,$n]=$(timed3 "$RESULTS" list --json --limit 0)
	last=$(git log -1 --format=%ct)
	# late in the busy month: after its last run, the same day
	F[add_late,$n]=$(for k in $(seq 1 "$ADDS"); do add_at $((last + k * 10)) "$k"; done | median)
	F[bytes_late,$n]=$(new_bytes HEAD)
	# early in the next month
	month=$(date -u -d "@$last" +%Y-%m-01)
	next=$(date -u -d "$month +1 month" +%s)
	F[add_early,$n]=$(for k in $(seq 1 "$ADDS"); do add_at $((next + k * 10)) $((k + 1000)); done | median)
	F[bytes_early,$n]=$(new_bytes "$(git rev-list -n "$ADDS" HEAD | sed -n "${ADDS}p")")
	rm -rf "$W/site$n"
	F[site_full,$n]=$(timed "$RESULTS" site "$W/site$n")
	add_at $((next + 100000)) 5000 >/dev/null
	F[site_incr,$n]=$(timed "$RESULTS" site "$W/site$n")
	RESULTS_RECORDED_AT=$((next + 100060)) "$RESULTS" add "$W/b.pyisession" --commit "$(printf '%040x' 6000)" \
		--branch "pr/first-$n" --trigger pr --stats "$W/stats.json" >/dev/null
	F[check_first_pr,$n]=$(timed3 "$RESULTS" check)
	# the clone the docs and the action's input clone make, of the same history
	git -C "$H/remote.git" config uploadpack.allowFilter true
	rm -rf "${W:?}/dev$n"
	"$RESULTS" clone "file://$H/remote.git" "$W/dev$n" >/dev/null
	cd "$W/dev$n"
	last=$(git log -1 --format=%ct)
	F[add_devclone,$n]=$(for k in $(seq 1 "$ADDS"); do add_at $((last + k * 10)) $((k + 7000)); done | median)
	cd "$H/clone"
	rm -rf "${W:?}/dev$n"
	echo "size $n done: history in $H"
done

first=${SIZES%% *}
echo
printf '%-22s' "figure"
for n in $SIZES; do printf '%16s' "$n runs"; done
printf '%14s %14s\n' "x first size" "x git log -1"
for f in "${names[@]}"; do
	printf '%-22s' "$f"
	for n in $SIZES; do
		case $f in bytes_*) printf '%14d B' "${F[$f,$n]}" ;; *) printf '%14.3f s' "${F[$f,$n]}" ;; esac
	done
	lastn=${SIZES##* }
	printf '%14.2f' "$(echo "${F[$f,$lastn]} / ${F[$f,$first]}" | bc -l)"
	case $f in bytes_*) printf '%15s\n' "-" ;; *) printf '%15.1f\n' "$(echo "${F[$f,$lastn]} / ${F[ref_log,$lastn]}" | bc -l)" ;; esac
done
echo
for n in $SIZES; do
	printf 'add at %d runs: late in a month of %d runs / early in a new month = x%.2f; / add at %d runs (early) = x%.2f\n' \
		"$n" "$((BUSY < n ? BUSY : n - 1))" "$(echo "${F[add_late,$n]} / ${F[add_early,$n]}" | bc -l)" \
		"$first" "$(echo "${F[add_late,$n]} / ${F[add_early,$first]}" | bc -l)"
	printf 'add at %d runs in the clone results clone makes / the same at %d runs = x%.2f\n' \
		"$n" "$first" "$(echo "${F[add_devclone,$n]} / ${F[add_devclone,$first]}" | bc -l)"
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
