#!/usr/bin/env bash
# Scale benchmark (issue 5): a results repository with RUNS recorded runs
# (default 10,000), and how the everyday commands behave on it.
#
#   RS_BIN_DIR=build bench/scale.sh            # RUNS=10000 ADDS=5
#   RUNS=2000 RS_BIN_DIR=build bench/scale.sh  # quicker
#
# How the history is built: two runs are recorded with `results add`
# (small generated sessions); their run.json, summary.md, session pointer
# and index line are the templates of RUNS-2 more runs written straight
# into git with `git fast-import`, one commit per run, exactly the files
# `results add` commits (the run folder and the month's index shard), with
# varied figures, three runs a night spread over the years, and a 10% step
# half-way for trend/find to see. Then ADDS more runs are recorded with
# the real `results add` on top of that history and timed.
#
# Prints, each with its ratio to a reference measured in the same run
# (`git rev-parse HEAD` and `git log -1`, process start-up included):
#   - seconds of results add / list / show / compare / check / trend /
#     trend --html / find on the full history;
#   - bytes of new git objects per `results add` commit early (2 runs) and
#     late (RUNS runs): the index must not make a commit cost O(runs);
#   - the size of a fresh clone (no session content) per 1,000 runs.
# Asserts nothing: figures are for reading (docs/regressions.md).
set -euo pipefail

: "${RS_BIN_DIR:?set RS_BIN_DIR to the build directory}"
RUNS=${RUNS:-10000}
ADDS=${ADDS:-5}
find_bin() {
	local d
	for d in "$RS_BIN_DIR" "$RS_BIN_DIR/src" "$RS_BIN_DIR/tests"; do
		[ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}
RS_BIN_DIR=$(cd "$RS_BIN_DIR" && pwd); export RS_BIN_DIR
RESULTS=$(find_bin results) || { echo "no results under $RS_BIN_DIR" >&2; exit 2; }
GEN=$(find_bin gen-session) || { echo "no gen-session under $RS_BIN_DIR" >&2; exit 2; }
RESULTS=$(cd "$(dirname "$RESULTS")" && pwd)/results
GEN=$(cd "$(dirname "$GEN")" && pwd)/gen-session

W=$(mktemp -d "${TMPDIR:-/tmp}/rs-scale.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
export HOME=$W/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
unset GITHUB_REF_NAME GITHUB_HEAD_REF RESULTS_RECORDED_AT || true
export RUNNER_NAME=bench-runner
mkdir -p "$HOME"
git config --global user.name bench && git config --global user.email bench@example.com
git config --global init.defaultBranch main
git lfs install --skip-repo >/dev/null

now() { date +%s.%N; }
# seconds taken by the command line (output discarded)
timed() {
	local t0 t1
	t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
	echo "$t1 - $t0" | bc -l
}
new_bytes() { # bytes of the objects a commit adds
	git rev-list --objects "$1" --not "$1^" | cut -d' ' -f1 |
		git cat-file --batch-check='%(objectsize)' | awk '{ s += $1 } END { print s + 0 }'
}

echo "# scale benchmark: $RUNS runs, work dir $W"
"$GEN" --seed 2 --samples 400 -o "$W/b.pyisession"
printf '{"population": 1000}\n' >"$W/stats.json"
here=$(cd "$(dirname "$0")" && pwd)
# the first add: on a repository of one run
"$here/scale_history.sh" 1 "$W/early" >/dev/null
cd "$W/early/clone"
T0=1609459200    # 2021-01-01: scale_history.sh's history starts here
t_add_early=$( { t0=$(now); RESULTS_RECORDED_AT=$((T0 + 3600)) "$RESULTS" add "$W/b.pyisession" \
	--commit "$(printf 'b%.0s' {1..40})" --branch main --trigger nightly \
	--stats "$W/stats.json" >/dev/null; t1=$(now); echo "$t1 - $t0" | bc -l; } )
bytes_early=$(new_bytes HEAD)

# --- the generated history (bench/scale_history.sh) --------------------------
"$here/scale_history.sh" "$RUNS" "$W/big"
cd "$W/big/clone"
last=$(git log -1 --format=%ct)

# --- the commands on the full history ---------------------------------------
ref1=$(timed git rev-parse HEAD)
ref2=$(timed git log -1 --format=%H)
adds=()
for k in $(seq 1 "$ADDS"); do
	t=$(timed env RESULTS_RECORDED_AT=$((last + k * 3600)) "$RESULTS" add "$W/b.pyisession" \
		--commit "$(printf '%040x' "$k")" --branch main --trigger nightly --stats "$W/stats.json")
	adds+=("$t")
done
bytes_late=$(new_bytes HEAD)
t_add=$(printf '%s\n' "${adds[@]}" | sort -n | sed -n "$(( (ADDS + 1) / 2 ))p")
mid=$(git log --format=%s -n 1 --skip=$((RUNS / 2)) | sed 's/^Record run //')
newest=$(git log --format=%s -n 1 | sed 's/^Record run //')

report() { # name seconds
	printf '%-28s %8.3f s   x%6.1f git rev-parse   x%6.1f git log -1\n' "$1" "$2" \
		"$(echo "$2 / $ref1" | bc -l)" "$(echo "$2 / $ref2" | bc -l)"
}
echo
printf '%-28s %8.3f s\n' "reference: git rev-parse" "$ref1"
printf '%-28s %8.3f s\n' "reference: git log -1" "$ref2"
report "results add (2 runs)" "$t_add_early"
report "results add ($RUNS runs, median)" "$t_add"
report "results list" "$(timed "$RESULTS" list)"
report "results list --limit 20" "$(timed "$RESULTS" list --limit 20)"
report "results show" "$(timed "$RESULTS" show "$newest")"
report "results compare" "$(timed "$RESULTS" compare "$mid" "$newest")"
report "results check" "$(timed "$RESULTS" check)"
report "results check --window 20" "$(timed "$RESULTS" check --window 20)"
report "results trend (500 runs)" "$(timed "$RESULTS" trend)"
report "results trend --html" "$(timed "$RESULTS" trend --html "$W/trend.html")"
report "results trend --limit $RUNS" "$(timed "$RESULTS" trend --limit "$RUNS" --summaries 50 --json)"
report "results find (all runs)" "$(timed "$RESULTS" find "$(git log --reverse --format=%s | sed -n 2p | sed 's/^Record run //')..$newest")"

echo
printf 'new git objects per results add commit: %d bytes at 2 runs, %d bytes at %d runs (x%.2f)\n' \
	"$bytes_early" "$bytes_late" "$RUNS" "$(echo "$bytes_late / $bytes_early" | bc -l)"
shard=$(git diff-tree -r --name-only HEAD^ HEAD | grep '^index/' || true)
printf 'the last commit rewrote %s (%d bytes); index/ holds %d shards\n' "$shard" \
	"$(git cat-file -s "HEAD:$shard")" "$(git ls-tree HEAD index/ | wc -l)"

t0=$(now)
GIT_LFS_SKIP_SMUDGE=1 git clone -q --no-local "file://$W/big/remote.git" "$W/clone"
t_clone=$(echo "$(now) - $t0" | bc -l)
size=$(du -sb "$W/clone/.git" | cut -f1)
wt=$(du -sb --exclude=.git "$W/clone" | cut -f1)
printf 'fresh clone: %.1f s, .git %.1f MB (%.2f MB per 1,000 runs), work tree %.1f MB\n' \
	"$t_clone" "$(echo "$size / 1048576" | bc -l)" "$(echo "$size / 1048576 / ($RUNS + $ADDS) * 1000" | bc -l)" \
	"$(echo "$wt / 1048576" | bc -l)"
lfs=$(find "$W/clone/.git/lfs/objects" -type f 2>/dev/null | wc -l)
echo "session objects in the clone: $lfs"
