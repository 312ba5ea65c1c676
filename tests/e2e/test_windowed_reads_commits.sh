#!/usr/bin/env bash
# The GitHub Action's pull-request path reads only the index shards the
# commit map names (issue 21, docs/run-format.md "Commit map"): in a
# partial clone (--filter=blob:none) holding February's shards and run
# folders, the commit map, and of January only the one shard and the one
# run folder of an old profiled commit X -- every other January blob
# missing, and the promisor remote out of reach so that nothing is
# fetched on demand -- `check NEWEST --baseline X`, `compare X NEWEST`,
# `show` of X (full, prefix, run id) and `list --first-profiled` work, and
# say byte for byte what they say in a full clone; so does `check RUN` of
# the newest run of a branch. Main's build, reading every shard to
# resolve a commit, fails here.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_windowed_reads_commits
export RS_BIN_DIR

# 1,200 runs, 50 a day from 2021-01-21: 550 in January, 650 in February
T0=1611100800 "$RS_SOURCE_DIR/bench/scale_history.sh" 1200 "$T/h" >/dev/null 2>"$T/h.err" ||
	{ cat "$T/h.err" >&2; fail "scale_history.sh"; }
FULL=$T/h/clone
# X: a pull-request run of January's second shard (one run of its commit)
line=$(git -C "$FULL" show HEAD:index/2021-01/0002.jsonl | grep '"trigger":"pr"' | sed -n 5p)
X=$(jq -r .commit <<<"$line")
X_ID=$(jq -r .id <<<"$line")
X_PATH=$(jq -r .path <<<"$line")
[ "$(git -C "$FULL" grep -h "\"commit\":\"$X\"" HEAD -- 'index/*.jsonl' 'index/*/*.jsonl' ':!index/commits' ':!index/branches' | wc -l)" = 1 ] ||
	fail "X $X has more than one run"
git -C "$FULL" show "HEAD:index/commits/${X:0:1}/${X:1:1}/${X:2:1}.jsonl" | grep -qF "{\"commit\":\"$X\",\"shards\":[[\"2021-01\",2,1]]}" ||
	fail "the commit map does not list X in 2021-01/0002: $(git -C "$FULL" show "HEAD:index/commits/${X:0:1}/${X:1:1}/${X:2:1}.jsonl")"

git -C "$T/h/remote.git" config uploadpack.allowFilter true || fail "config of remote.git"
GIT_LFS_SKIP_SMUDGE=1 git clone -q --filter=blob:none --no-checkout "file://$T/h/remote.git" "$T/pc" ||
	fail "the partial clone"
cd "$T/pc"
git sparse-checkout set --no-cone '/*' '!/*/' '/index/' '!/index/*/' '!/index/*.jsonl' \
	'/index/branches/' '/index/commits/' '/index/2021-02.jsonl' '/index/2021-02/' '/runs/2021/02/' \
	'/index/2021-01/0002.jsonl' "/$X_PATH/" ||
	fail "git sparse-checkout set"
GIT_LFS_SKIP_SMUDGE=1 git checkout -q main || fail "the sparse checkout"
partial_clone_setup "file://$T/h/store"
for s in index/2021-01.jsonl index/2021-01/0003.jsonl index/2021-01/0004.jsonl; do
	grep -q "$(git rev-parse "HEAD:$s")" "$T/missing" || fail "$s is in the partial clone"
done
grep -q "$(git rev-parse HEAD:index/2021-01/0002.jsonl)" "$T/missing" && fail "X's shard is not in the partial clone"
# offline: a missing file cannot be fetched, so a read of another January shard fails
git remote set-url origin "file://$T/offline.git" || fail "set-url"
expect_status 5 "$RESULTS" list --limit 0
grep -q "index/2021-01" "$T/err" || fail "list --limit 0: $(cat "$T/err")"
pass "the partial clone lacks January's shards but X's (list --limit 0 says so, offline)"

NEWEST=$("$RESULTS" list --json --limit 1 | jq -r '.[0].id')
NEWEST_C=$("$RESULTS" list --json --limit 1 | jq -r '.[0].commit')
# the same command here and in the full clone: the same bytes and status
same() {
	local a=0 b=0
	"$RESULTS" "$@" >"$T/pc.out" 2>"$T/pc.err" || a=$?
	(cd "$FULL" && "$RESULTS" "$@") >"$T/full.out" 2>"$T/full.err" || b=$?
	# (LeakSanitizer's note of the suppressed libgit2 leaks differs between the clones)
	for f in pc full; do sed -e '/^-----*$/,/^-----*$/d' -e '/^$/d' "$T/$f.err" >"$T/$f.msg"; done
	[ "$a" = "$b" ] && cmp -s "$T/pc.out" "$T/full.out" && cmp -s "$T/pc.msg" "$T/full.msg" ||
		{ cat "$T/pc.err" >&2; diff "$T/pc.out" "$T/full.out" | head -5 >&2; fail "'$*' exited $a here, $b in the full clone, or said other things"; }
	[ "$a" -le 1 ] || [ -n "${ANY_STATUS:-}" ] || { cat "$T/pc.err" >&2; fail "'$*' exited $a"; }
}
same check "$NEWEST" --baseline "$X" --format json
jq -e --arg x "$X" '.baseline_commit == $x' "$T/pc.out" >/dev/null || fail "check --baseline X judged against $(jq -r .baseline_commit "$T/pc.out")"
same check "$NEWEST" --baseline "$X" --format markdown
same check "$NEWEST" --baseline "${X:0:6}"
same check "$NEWEST" --baseline "$X_ID"
same compare "$X" "$NEWEST"
same compare "${X:0:5}" "$NEWEST_C" --format json
same show "$X"
same show "$X_ID"
same show "${X:0:7}"
ANY_STATUS=1 same show "$(printf 'f%.0s' {1..40})"
grep -q "no run of commit" "$T/pc.err" || fail "show of a commit never profiled: $(cat "$T/pc.err")"
pass "check --baseline X, compare and show of X read only X's shard of January, and say what a full read says"

# the nearest profiled commit among 500 candidates, through the map
for i in $(seq 1 200); do printf '%040x\n' "$((i * 7919))"; done >"$T/cand"
{ cat "$T/cand"; echo "$X"; echo "$NEWEST_C"; cat "$T/cand"; } >"$T/cand-x"
expect_status 0 "$RESULTS" list --first-profiled "$T/cand-x"
[ "$(cat "$T/out")" = "$X" ] || fail "list --first-profiled printed '$(cat "$T/out")', want X $X"
expect_status 0 "$RESULTS" list --first-profiled - <"$T/cand"
[ ! -s "$T/out" ] || fail "list --first-profiled of commits never profiled printed '$(cat "$T/out")'"
# what the action did before: every run listed, then the first candidate among them
(cd "$FULL" && "$RESULTS" list --json --limit 0) | jq -r '.[].commit' | sort -u >"$T/profiled"
[ "$(grep -m1 -Fxf "$T/profiled" "$T/cand-x")" = "$X" ] || fail "the whole list disagrees"
printf 'not-a-commit\n' >"$T/bad"
expect_status 2 "$RESULTS" list --first-profiled "$T/bad"
grep -q "line 1 of '.*bad' is not a commit id" "$T/err" || fail "a bad candidate line: $(cat "$T/err")"
pass "list --first-profiled finds X among 402 candidates (and none among 200) reading no other January shard"

# add updates the commit map (its run's bucket and covered.json) without reading January
last=$(git log -1 --format=%ct)
gen --seed 9 --samples 80 -o "$T/s.pyisession"
C=$(printf '7%.0s' {1..40})
RESULTS_RECORDED_AT=$((last + 60)) expect_status 0 "$RESULTS" add "$T/s.pyisession" \
	--commit "$C" --trigger pr --branch pr/new --stats "$T/h/stats.json"
[ "$(git diff-tree -r --name-only HEAD~1 HEAD -- index/commits | tr '\n' ' ')" = "index/commits/7/7/7.jsonl index/commits/covered.json " ] ||
	fail "add changed $(git diff-tree -r --name-only HEAD~1 HEAD -- index/commits | tr '\n' ' ')"
expect_status 0 "$RESULTS" show "${C:0:8}"
printf '%s\n' "$C" >>"$T/cand"
expect_status 0 "$RESULTS" list --first-profiled "$T/cand"
[ "$(cat "$T/out")" = "$C" ] || fail "the new run's commit is not found: '$(cat "$T/out")'"
pass "add writes the run's bucket of the commit map and covered.json; its commit resolves at once"

# check of a named run without --baseline (the action's push path, and a pull request
# whose merge base is not profiled): the newest run of its branch is judged against
# the branch's window, which the branch map bounds; found through the commit map
NEW_ID=$("$RESULTS" list --json --limit 1 | jq -r '.[0].id')
for q in "$NEW_ID" "${C:0:6}"; do
	expect_status 0 "$RESULTS" check "$q"
	grep -q "no earlier commit profiled on the same machine to compare with" "$T/out" ||
		fail "check $q: $(cat "$T/out") $(cat "$T/err")"
done
pass "check of a named run, the newest of its branch, reads no January blob"
