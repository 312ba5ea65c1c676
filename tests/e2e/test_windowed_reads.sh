#!/usr/bin/env bash
# list, check and trend with their default windows read only the index
# shards and run folders their window needs, newest first (issue 21,
# docs/run-format.md "Index"): in a partial clone (--filter=blob:none)
# holding only the newest month's shards and run folders -- every older
# blob missing, and the promisor remote out of reach so that nothing is
# fetched on demand (src/git/repo.c would ask git for it) -- they work, and
# so does results add; what needs the whole index (list --limit 0) cannot.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_windowed_reads
export RS_BIN_DIR
gen --seed 9 --samples 80 -o "$T/s.pyisession"

# 1,200 runs, 50 a day from 2021-01-21: 550 in January, 650 in February
T0=1611100800 "$RS_SOURCE_DIR/bench/scale_history.sh" 1200 "$T/h" >/dev/null 2>"$T/h.err" ||
	{ cat "$T/h.err" >&2; fail "scale_history.sh"; }
git -C "$T/h/remote.git" config uploadpack.allowFilter true || fail "config of remote.git"
GIT_LFS_SKIP_SMUDGE=1 git clone -q --filter=blob:none --no-checkout "file://$T/h/remote.git" "$T/pc" ||
	fail "the partial clone"
cd "$T/pc"
# every file at the top, the branch map, February's shards and run
# folders; nothing else
git sparse-checkout set --no-cone '/*' '!/*/' '/index/' '!/index/*/' '!/index/*.jsonl' \
	'/index/branches/' '/index/2021-02.jsonl' '/index/2021-02/' '/runs/2021/02/' ||
	fail "git sparse-checkout set"
GIT_LFS_SKIP_SMUDGE=1 git checkout -q main || fail "the sparse checkout"
# A partial clone is repositoryformatversion 1: libgit2 1.5 leaks pcre2
# match data opening it; tests/lsan.supp (lib.sh) suppresses that leak only.
partial_clone_setup "file://$T/h/store"
grep -q "$(git rev-parse HEAD:index/2021-01.jsonl)" "$T/missing" || fail "January's shard is in the partial clone"
old_run=$(git ls-tree -r HEAD runs/2021/01/21 | awk '$4 ~ /run.json$/ && !n++ { print $3 }')  # no early exit: SIGPIPE under pipefail
grep -q "$old_run" "$T/missing" || fail "January's run.json is in the partial clone"
grep -q "$(git rev-parse HEAD:index/2021-02.jsonl)" "$T/missing" && fail "February's shard is not in the partial clone"

# offline: a missing file cannot be fetched, so a read outside the window fails
git remote set-url origin "file://$T/offline.git" || fail "set-url"
expect_status 5 "$RESULTS" list --limit 0
grep -q "index/2021-01" "$T/err" || fail "list --limit 0: $(cat "$T/err")"
pass "the partial clone lacks January's shards (list --limit 0 says so, offline)"

expect_status 0 "$RESULTS" list
[ "$(grep -c -- '-pr-\|-nightly-' "$T/out")" = 20 ] || fail "list shows $(cat "$T/out")"
expect_status 0 "$RESULTS" list --branch main --limit 5
[ "$(grep -c ' main ' "$T/out")" = 5 ] || fail "list --branch main shows $(cat "$T/out")"
last=$(git log -1 --format=%ct)
RESULTS_RECORDED_AT=$((last + 60)) expect_status 0 "$RESULTS" add "$T/s.pyisession" \
	--commit "$(printf 'f%.0s' {1..40})" --trigger nightly --branch main --stats "$T/h/stats.json"
for cmd in "check" "check --window 20" "check --branch main" "trend" "trend --branch main --limit 30" "trend --html $T/t.html"; do
	# shellcheck disable=SC2086
	expect_status 0 "$RESULTS" $cmd
done
grep -q "runs" "$T/err" || [ -s "$T/t.html" ] || fail "trend --html wrote nothing"
pass "list, add, check and trend with their default windows read no January blob"

# The newest run the first of a pull-request branch: check's window (the
# runs before it on its branch) is empty, and the branch map
# (index/branches/, docs/run-format.md) says so without reading the
# shards of January; the verdict is the one a whole read gives.
RESULTS_RECORDED_AT=$((last + 120)) expect_status 0 "$RESULTS" add "$T/s.pyisession" \
	--commit "$(printf 'e%.0s' {1..40})" --trigger pr --branch pr/first-of-its-name --stats "$T/h/stats.json"
expect_status 0 "$RESULTS" check
grep -q "no earlier commit profiled on the same machine to compare with" "$T/out" ||
	fail "check of a pull request's first run: $(cat "$T/out") $(cat "$T/err")"
cp "$T/out" "$T/check-first-pr"
git show --stat HEAD | grep -q "index/branches/" || fail "add did not update the branch map"
expect_status 0 "$RESULTS" check --branch pr/first-of-its-name
cmp -s "$T/out" "$T/check-first-pr" || fail "check --branch differs: $(cat "$T/out")"
# a second run of it (another session): its window is the first run, found through the map
gen --seed 10 --samples 80 -o "$T/s2.pyisession"
RESULTS_RECORDED_AT=$((last + 180)) expect_status 0 "$RESULTS" add "$T/s2.pyisession" \
	--commit "$(printf 'd%.0s' {1..40})" --trigger pr --branch pr/first-of-its-name --stats "$T/h/stats.json"
expect_status 0 "$RESULTS" check --format json
[ "$(jq -r '.baseline_commit' "$T/out")" = "$(printf 'e%.0s' {1..40})" ] ||
	fail "the second run of the branch is not checked against the first: $(cat "$T/out")"
pass "check of a pull request's first run, and of its second, read no January blob (the branch map)"
