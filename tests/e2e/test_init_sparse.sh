#!/usr/bin/env bash
# `results init --sparse` (issue 21: the add where CI records): a full
# clone given the work tree and index `results clone` makes:
#  - after it, `git status --porcelain` is empty, runs/ and index/ are out
#    of the work tree and collapsed in the index (`git ls-files --sparse`
#    is HEAD's top-level tree, a sparse folder entry each), the patterns
#    and settings are results clone's, and no extensions.worktreeConfig;
#  - `results add` then leaves it so: `git write-tree` is HEAD^{tree},
#    the index still sparse, and the add never read()s .git/index (strace:
#    the splicer maps it; libgit2's load would read it whole);
#  - refused, exit 2, naming the path and changing nothing, with an
#    untracked file under runs/, a changed tracked file under index/, or a
#    staged change anywhere (git's read-tree of HEAD would drop it);
#  - running it again changes nothing ("already"), and a second add on
#    top works; --sparse with --global is bad usage;
#  - a copied clone (stale stat data) with a non-cone sparse checkout of
#    its own is wholly collapsed too; the user guide's undo gives a whole
#    work tree back.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_init_sparse

unset GIT_DIR GIT_WORK_TREE
command -v strace >/dev/null || fail "strace is needed (scripts/install-deps.sh)"
gen --seed 3 --samples 200 -o "$T/s.pyisession"
CLOCK=1764540000 # 2025-11-30 22:00: the runs span two months
add() { # add SHA-DIGIT: one run recorded, an hour after the previous one
	CLOCK=$((CLOCK + 3600))
	RESULTS_RECORDED_AT=$CLOCK expect_status 0 "$RESULTS" add "$T/s.pyisession" \
		--commit "$(printf '%s%039d' "$1" 0)" --branch main --trigger ci
}
# check_sparse WHAT: status clean, the index sparse and HEAD's, no run folder in the work tree
check_sparse() {
	[ -z "$(git status --porcelain)" ] || { git status --porcelain | head >&2; fail "$1: git status is not clean"; }
	git diff --cached --quiet || fail "$1: git diff --cached is not empty"
	[ "$(git write-tree)" = "$(git rev-parse 'HEAD^{tree}')" ] || fail "$1: the index's tree is not HEAD's"
	python3 -c 'import sys; b = open(".git/index", "rb").read(); sys.exit(b"sdir" not in b[-40:])' ||
		fail "$1: the index is not sparse"
	diff <(git ls-files --sparse -s | awk '{print $1, $2, $4}') \
		<(git ls-tree HEAD | awk '{print $1, $3, $4 ($2 == "tree" ? "/" : "")}') >"$T/sdiff" ||
		{ cat "$T/sdiff" >&2; fail "$1: the index is not HEAD's top-level tree with runs/ and index/ collapsed"; }
	[ ! -e runs ] && [ ! -e index ] || fail "$1: runs/ or index/ is in the work tree: $(ls)"
}

# --- a results repository with runs, and its full clone (as actions/checkout makes) ---
results_ci "$T/store" "$T/s.pyisession" "$(printf 'a%039d' 0)"
add b
add c
git push -q origin main 2>/dev/null
git clone -q "$T/results.git" "$T/full" 2>/dev/null
cd "$T/full"
[ -d runs ] && [ -d index ] || fail "the full clone has no runs/ and index/"
git ls-files --sparse | grep -qx 'runs/' && fail "the full clone's index is already sparse"

# --- refusals: nothing of the user's is lost, nothing is changed ------------------
before=$(md5sum .git/index .git/config | md5sum)
run_json=$(git ls-files 'runs/*/run.json' | head -1)
echo '{"mine": 1}' >"$(dirname "$run_json")/notes.json"
expect_status 2 "$RESULTS" init --sparse
grep -q "uncommitted change.*would be lost.*'$(dirname "$run_json")/notes.json' (untracked)" "$T/err" ||
	fail "an untracked file under runs/: $(cat "$T/err")"
[ "$(md5sum .git/index .git/config | md5sum)" = "$before" ] || fail "the refused init changed the index or config"
[ -f "$(dirname "$run_json")/notes.json" ] && [ -f "$run_json" ] || fail "the refused init removed files"
rm "$(dirname "$run_json")/notes.json"
shard=$(git ls-files 'index/*' | head -1)
echo "edited" >>"$shard"
expect_status 2 "$RESULTS" init --sparse
grep -q "'$shard' (changed)" "$T/err" || fail "a changed index shard: $(cat "$T/err")"
git checkout -q -- "$shard"
echo "a note" >notes.txt
git add notes.txt
expect_status 2 "$RESULTS" init --sparse
grep -q "'notes.txt' (changed)" "$T/err" || fail "a staged file at the top: $(cat "$T/err")"
[ "$(git diff --cached --name-only)" = notes.txt ] || fail "the refused init unstaged notes.txt"
git rm -q --cached notes.txt
# an untracked file at the top is not the sparse checkout's: it stays
expect_status 0 "$RESULTS" init --sparse
grep -q "^sparse: *made" "$T/out" || fail "init --sparse did not say it made the clone sparse: $(cat "$T/out")"
[ -f notes.txt ] || fail "init --sparse removed an untracked file at the top"
rm notes.txt
pass "refused with an untracked file under runs/, a changed shard, a staged file; an untracked top file kept"

# --- the layout -------------------------------------------------------------------
check_sparse "after init --sparse"
[ "$(git config core.sparseCheckout)" = true ] && [ "$(git config core.sparseCheckoutCone)" = true ] &&
	[ "$(git config index.sparse)" = true ] || fail "the sparse settings are not set"
[ "$(cat .git/info/sparse-checkout)" = "$(printf '/*\n!/*/')" ] || fail "patterns: $(cat .git/info/sparse-checkout)"
[ -z "$(git config extensions.worktreeConfig || true)" ] || fail "extensions.worktreeConfig was set"
git ls-files --sparse | grep -qx 'runs/' && git ls-files --sparse | grep -qx 'index/' ||
	fail "runs/ and index/ are not collapsed: $(git ls-files --sparse | head -5)"
expect_status 0 "$RESULTS" doctor
pass "init --sparse: status clean, runs/ and index/ collapsed in a sparse index, out of the work tree"

# --- again: nothing changes ---------------------------------------------------------
before=$(md5sum .git/config .git/info/sparse-checkout | md5sum)
head=$(git rev-parse HEAD)
expect_status 0 "$RESULTS" init --sparse
grep -q "^sparse: *already" "$T/out" || fail "a second init --sparse: $(cat "$T/out")"
grep -q "^committed: *nothing" "$T/out" || fail "a second init --sparse committed: $(cat "$T/out")"
[ "$(md5sum .git/config .git/info/sparse-checkout | md5sum)" = "$before" ] || fail "a second init changed the config"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "a second init made a commit"
check_sparse "after a second init --sparse"
pass "init --sparse again changes nothing"

# --- the add in it ------------------------------------------------------------------
add d
check_sparse "after an add"
CLOCK=$((CLOCK + 3600))
# (LeakSanitizer cannot run under ptrace: leaks are checked by the other adds)
RESULTS_RECORDED_AT=$CLOCK ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -y -e trace=read,pread64 -o "$T/trace" "$RESULTS" add \
	"$T/s.pyisession" --commit "$(printf 'e%039d' 0)" --branch main --trigger ci >/dev/null 2>"$T/err" ||
	fail "the add under strace failed: $(cat "$T/err")"
read_bytes=$(awk '/\.git\/index>/ && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$T/trace")
[ "$read_bytes" = 0 ] || fail "the add read $read_bytes bytes of the sparse index: it loaded it"
check_sparse "after the add under strace"
expect_status 0 "$RESULTS" list
[ "$(grep -c ' ci ' "$T/out")" = 5 ] || fail "results list does not show the 5 runs: $(cat "$T/out")"
git push -q origin main 2>/dev/null || fail "the push from the sparse clone"
pass "results add in it: write-tree is HEAD's tree, the index stays sparse and is never read"

# --- a copied clone (stale stat data) with a sparse checkout of its own ---------------
# read-tree alone leaves such files "not uptodate" in the work tree, and
# collapses only the folders that were skip-worktree already
git clone -q "$T/results.git" "$T/own" 2>/dev/null
cd "$T/own"
git config core.sparseCheckout true
# (as bench/scale_history.sh's clone: the last month checked out, the older ones skip-worktree)
last_month=$(git ls-files 'runs/*/run.json' | tail -1 | cut -d/ -f1-3)
[ "$(git ls-files 'runs/*/run.json' | cut -d/ -f1-3 | sort -u | wc -l)" -ge 2 ] ||
	fail "the runs do not span two months: $(git ls-files 'runs/*/run.json')"
printf '/*\n!/runs/\n/%s/\n' "$last_month" >.git/info/sparse-checkout
GIT_LFS_SKIP_SMUDGE=1 git read-tree -mu HEAD
[ -d "$last_month" ] || fail "the own sparse checkout has no $last_month"
git ls-files -t runs | grep -q '^S ' || fail "the own sparse checkout has no skip-worktree entry"
cp -a "$T/own" "$T/copied"
cd "$T/copied"
sleep 1
touch README.md index
expect_status 0 "$RESULTS" init --sparse
check_sparse "a copied clone with a non-cone sparse checkout"
pass "a copied clone with a sparse checkout of its own: wholly collapsed, nothing left in the work tree"

# --- undone as docs/user-guide.md says ------------------------------------------------
git config index.sparse false
echo '/*' >.git/info/sparse-checkout
GIT_LFS_SKIP_SMUDGE=1 git read-tree -m -u HEAD
git config core.sparseCheckout false
[ -z "$(git status --porcelain)" ] || fail "undone: git status is not clean"
[ "$(git ls-files -t | grep -vc '^H ')" = 0 ] || fail "undone: entries still skip-worktree"
[ "$(git ls-files | wc -l)" = "$(git ls-tree -r HEAD | wc -l)" ] && [ -f "$run_json" ] ||
	fail "undone: the run folders are not back in the work tree"
[ "$(git ls-files --sparse | wc -l)" = "$(git ls-files | wc -l)" ] || fail "undone: the index is still sparse"
pass "undone as the user guide says: a whole work tree again"

# --- bad usage ----------------------------------------------------------------------
expect_status 2 "$RESULTS" init --sparse --global
grep -q -- "--sparse.*without --global" "$T/err" || fail "--sparse --global: $(cat "$T/err")"
pass "--sparse with --global is bad usage"
