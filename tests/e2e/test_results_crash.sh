#!/usr/bin/env bash
# End-to-end test of what a failed or killed `results add` / `results
# fetch` leaves in the results repository (issue 9, data loss and
# leftovers):
#  - a stray .git/index.lock: nothing is committed, no LFS object a
#    commit refers to is deleted, the message names the lock (exit 8);
#  - an LFS object that cannot be placed: a specific message, not
#    "unknown error" (exit 8);
#  - `results add` killed at every rename it makes (strace inject), and at
#    the removal of its journal: no run file ever shows as deleted, no
#    temporary file appears in the work tree, git fsck passes, and the next
#    `results add` repairs the repository (a note says so) and records;
#  - the same kills in a clone with git's sparse index (what `results
#    clone` makes, spliced by results; libgit2 cannot read it): the index
#    stays sparse and HEAD's after each repair;
#  - killed mid-copy (add and fetch): the partial copy is under .git, never
#    in the work tree; stale temporary files (ours, by name, owner and age)
#    are removed by the next command, fresh ones and foreign ones stay.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_results_crash

has() { grep "$@" >/dev/null; }
command -v strace >/dev/null || fail "strace is needed for the kill tests"
# LeakSanitizer cannot run under ptrace: the sanitizer build checks leaks
# in every run that is not traced.
traced() { ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace "$@"; }

mkdir -p "$T/in"
cp "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_5.1.2.pyisession" "$T/in/small.pyisession"
cp "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_4.6.2.pyisession" "$T/in/other.pyisession"
gen --seed 4 --size 4M -o "$T/in/big.pyisession"

results_repo "$T/repo"
SHA=1234aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa

runs_count() { git ls-tree -r --name-only HEAD -- runs | grep -c '/run\.json$' || true; }
# Every LFS pointer HEAD holds has its object (git lfs fsck checks them).
consistent() {
	local st
	st=$(git status --porcelain --untracked-files=all)
	[ -z "$st" ] || fail "$1: work tree not clean: $st"
	git fsck --no-progress >/dev/null 2>"$T/fsck.err" || { cat "$T/fsck.err"; fail "$1: git fsck"; }
	git lfs fsck >/dev/null 2>&1 || fail "$1: git lfs fsck (an object HEAD refers to is missing)"
	[ ! -e .git/results/commit-journal ] || fail "$1: the journal was left"
}
"$RESULTS" add "$T/in/small.pyisession" --commit "$SHA" --trigger first >/dev/null
consistent "first add"

# --- a stray index.lock ------------------------------------------------
before=$(git rev-parse HEAD)
: >.git/index.lock
expect_status 8 "$RESULTS" add "$T/in/other.pyisession" --commit "$SHA" --trigger locked
has "index.lock' exists" "$T/err" || fail "index.lock message: $(cat "$T/err")"
has "nothing was recorded" "$T/err" || fail "index.lock message: $(cat "$T/err")"
[ "$(git rev-parse HEAD)" = "$before" ] || fail "a commit was made despite the index lock"
rm .git/index.lock
consistent "after the index.lock refusal"
"$RESULTS" add "$T/in/other.pyisession" --commit "$SHA" --trigger unlocked >/dev/null
consistent "add after the lock was removed"
pass "a stray index.lock: exit 8, names the lock, nothing committed, no object lost"

# --- an object that cannot be placed: a specific message ----------------
oid=$(sha256sum "$T/in/big.pyisession" | cut -d' ' -f1)
mkdir -p .git/lfs/objects
: >".git/lfs/objects/${oid:0:2}"          # a file where a folder must be
before=$(git rev-parse HEAD)
expect_status 8 "$RESULTS" add "$T/in/big.pyisession" --commit "$SHA" --trigger blocked
has "unknown error" "$T/err" && fail "place_objects lost its message: $(cat "$T/err")"
has "cannot create directory '.*lfs/objects/${oid:0:2}/${oid:2:2}': Not a directory" "$T/err" \
	|| fail "placing message: $(cat "$T/err")"
[ "$(git rev-parse HEAD)" = "$before" ] || fail "a commit was made without its object"
rm ".git/lfs/objects/${oid:0:2}"
consistent "after the placing failure"
[ -z "$(find .git/lfs/tmp -name "results-*" -type f)" ] || fail "the copy was left in .git/lfs/tmp"
pass "an object that cannot be placed: exit 8 and a message naming the path"

# --- kills at every rename of results add -------------------------------
n=1
while :; do
	before=$(git rev-parse HEAD)
	runs_before=$(runs_count)
	gen --seed $((100 + n)) --size 64K -o "$T/in/k$n.pyisession" # a new object to place
	rc=0
	traced -f -qq -o /dev/null -e trace=rename,renameat,renameat2 \
		-e inject=rename,renameat,renameat2:signal=KILL:when=$n \
		"$RESULTS" add "$T/in/k$n.pyisession" --commit "$SHA" --trigger k$n \
		>"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] && break        # fewer than n renames: it ran to the end
	[ "$rc" = 137 ] || { cat "$T/err"; fail "rename #$n: exit $rc, want a kill"; }
	st=$(git status --porcelain --untracked-files=all)
	echo "$st" | has -E '^(D|.D) ' && fail "rename #$n: a run file shows as deleted: $st"
	echo "$st" | has -e 'tmp-' -e 'results-' && fail "rename #$n: a temporary file in the work tree: $st"
	moved=0
	[ "$(git rev-parse HEAD)" != "$before" ] && moved=1
	git fsck --no-progress >/dev/null 2>&1 || fail "rename #$n: git fsck"
	"$RESULTS" add "$T/in/k$n.pyisession" --commit "$SHA" --trigger r$n >"$T/out" 2>"$T/err" \
		|| { cat "$T/err"; fail "rename #$n: the next add failed"; }
	if [ -n "$st" ]; then
		has "an interrupted 'results add'" "$T/err" || fail "rename #$n: no note on the repair: $(cat "$T/err")"
	fi
	consistent "after a kill at rename #$n"
	[ "$(runs_count)" = $((runs_before + 1 + moved)) ] || fail "rename #$n: runs $(runs_count), want $((runs_before + 1 + moved))"
	echo "  kill at rename #$n: status $( [ -n "$st" ] && echo "$st" | tr '\n' ' ' || echo clean)," \
		"branch moved: $moved; repaired"
	n=$((n + 1))
	[ "$n" -le 40 ] || fail "results add never ran to the end"
done
# object, journal, 5 work-tree files, index, branch
[ "$n" -ge 10 ] || fail "only $((n - 1)) renames were tried"
pass "killed at each of its $((n - 1)) renames: never a deleted run, the next add repairs"

# Killed after the commit point, at the removal of its journal.
before=$(git rev-parse HEAD)
runs_before=$(runs_count)
rc=0
traced -f -qq -o /dev/null -P "$PWD/.git/results/commit-journal" -e trace=unlink,unlinkat \
	-e inject=unlink,unlinkat:signal=KILL:when=1 \
	"$RESULTS" add "$T/in/small.pyisession" --commit "$SHA" --trigger late >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 137 ] || fail "journal removal: exit $rc"
[ "$(git rev-parse HEAD)" != "$before" ] || fail "the branch should have moved"
[ -z "$(git status --porcelain --untracked-files=all)" ] || fail "not clean after the commit point"
"$RESULTS" add "$T/in/small.pyisession" --commit "$SHA" --trigger after >"$T/out" 2>"$T/err"
has "finished an interrupted 'results add'" "$T/err" || fail "no note: $(cat "$T/err")"
consistent "after a kill at the journal's removal"
[ "$(runs_count)" = $((runs_before + 2)) ] || fail "both runs should be recorded"
pass "killed after the commit point: the run stays, the next add finishes"

# --- killed mid-copy; stale temporary files ------------------------------
rc=0
traced -f -qq -o /dev/null -e trace=write -e inject=write:signal=KILL:when=2 \
	"$RESULTS" add "$T/in/big.pyisession" --commit "$SHA" --trigger copy >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 137 ] || fail "mid-copy: exit $rc"
[ -z "$(git status --porcelain --untracked-files=all)" ] || fail "mid-copy kill: $(git status --porcelain)"
partial=$(find .git/lfs/tmp -name 'results-*' -type f)
[ -n "$partial" ] || fail "the partial copy should be in .git/lfs/tmp"
pass "killed mid-copy: the partial copy is in .git/lfs/tmp, the work tree is clean"

# The fetch of a session whose object is local: killed while it writes
# the session over its pointer in the work tree.
"$RESULTS" add "$T/in/big.pyisession" --commit "$SHA" --trigger big >"$T/out"
run=$(sed -n 's/^recorded run \([^ ]*\) .*/\1/p' "$T/out")
ptr=$(git ls-files "runs/*/$(git ls-files 'runs/*' | grep -- "-big-" | head -1 | xargs dirname | xargs basename)/big.pyisession")
rc=0
traced -f -qq -o /dev/null -e trace=write -e inject=write:signal=KILL:when=2 \
	"$RESULTS" fetch "$run" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 137 ] || { cat "$T/err"; fail "fetch mid-copy: exit $rc"; }
[ -z "$(git status --porcelain --untracked-files=all)" ] || fail "fetch kill: $(git status --porcelain --untracked-files=all)"
head -c 40 "$ptr" | has '^version https://git-lfs' || fail "the pointer was damaged"
[ -n "$(find .git/results/tmp -name 'results-*' -type f)" ] || fail "the fetch's partial copy should be in .git/results/tmp"
"$RESULTS" fetch "$run" >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "fetch after the kill"; }
cmp "$ptr" "$T/in/big.pyisession" || fail "fetch did not check the session out"
pass "fetch killed mid-copy: the partial copy is in .git/results/tmp; the next fetch works"

# A download from the store, killed mid-write: nothing partial among the
# objects (git-lfs would take a file there for the object), the partial
# copy is in .git/lfs/tmp; the next fetch downloads it whole.
git init -q --bare "$T/results.git"
git clone -q "$T/results.git" "$T/ci" 2>/dev/null
(
	cd "$T/ci"
	"$RESULTS" init --remote "file://$T/store" >/dev/null
	"$RESULTS" add "$T/in/big.pyisession" --commit "$SHA" --trigger ci >/dev/null
	git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }
)
git clone -q "$T/results.git" "$T/dev" 2>/dev/null
(
	cd "$T/dev"
	"$RESULTS" init >/dev/null
	rc=0
	traced -f -qq -o /dev/null -e trace=write -e inject=write:signal=KILL:when=1 \
		"$RESULTS" fetch "$SHA" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 137 ] || { cat "$T/err"; fail "download kill: exit $rc"; }
	[ -z "$(find .git/lfs/objects -type f 2>/dev/null)" ] \
		|| fail "a partial file among the objects: $(find .git/lfs/objects -type f)"
	[ -n "$(find .git/lfs/tmp -name 'results-*' -type f)" ] || fail "no partial download in .git/lfs/tmp"
	[ -z "$(git status --porcelain --untracked-files=all)" ] || fail "download kill: $(git status --porcelain)"
	"$RESULTS" fetch "$SHA" >"$T/out" 2>"$T/err" || { cat "$T/err"; fail "fetch after the kill"; }
	cmp "$(cat "$T/out")" "$T/in/big.pyisession" || fail "the fetched session differs"
	find .git/lfs/tmp -name 'results-*' -type f -exec touch -d '2 hours ago' {} +
	"$RESULTS" fetch "$SHA" >/dev/null
	[ -z "$(find .git/lfs/tmp -name 'results-*' -type f)" ] || fail "the stale download stayed"
)
pass "a download killed mid-write: nothing partial among the objects, removed once stale"

# Stale ones go, fresh ones and other people's stay.
find .git/lfs/tmp .git/results/tmp -name 'results-*' -type f -exec touch -d '2 hours ago' {} +
stale=$(find .git/lfs/tmp .git/results/tmp -name 'results-*' -type f)
[ -n "$stale" ] || fail "no stale file to clean"
: >.git/lfs/tmp/results-1-2-3abc.tmp-AbC123; touch -d '3 hours ago' .git/lfs/tmp/results-1-2-3abc.tmp-AbC123
: >.git/lfs/tmp/results-1-2-ffff0
: >.git/results/tmp/results-9-9-9
touch -d '10 minutes ago' .git/lfs/tmp/results-1-2-ffff0 .git/results/tmp/results-9-9-9
: >.git/lfs/tmp/123456789-git-lfs; touch -d '3 hours ago' .git/lfs/tmp/123456789-git-lfs
echo secret >"$T/target"
ln -s "$T/target" .git/lfs/tmp/results-5-5-5
touch -h -d '3 hours ago' .git/lfs/tmp/results-5-5-5
if [ "$(id -u)" = 0 ]; then
	: >.git/lfs/tmp/results-7-7-7; chown 65534 .git/lfs/tmp/results-7-7-7
	touch -d '3 hours ago' .git/lfs/tmp/results-7-7-7
fi
"$RESULTS" fetch "$run" >/dev/null
for f in $stale .git/lfs/tmp/results-1-2-3abc.tmp-AbC123; do
	[ ! -e "$f" ] || fail "stale '$f' was not removed"
done
for f in .git/lfs/tmp/results-1-2-ffff0 .git/results/tmp/results-9-9-9 .git/lfs/tmp/123456789-git-lfs; do
	[ -e "$f" ] || fail "'$f' (fresh, or not ours) was removed"
done
[ -L .git/lfs/tmp/results-5-5-5 ] && [ "$(cat "$T/target")" = secret ] || fail "a symlink was followed or removed"
if [ "$(id -u)" = 0 ]; then
	[ -e .git/lfs/tmp/results-7-7-7 ] || fail "another user's file was removed"
fi
# A partial object that an older version left beside its object (a killed
# fetch): removed when the object is placed, a fresh one kept.
gen --seed 77 --size 64K -o "$T/in/p.pyisession"
oid=$(sha256sum "$T/in/p.pyisession" | cut -d' ' -f1)
odir=.git/lfs/objects/${oid:0:2}/${oid:2:2}
mkdir -p "$odir"
: >"$odir/$oid.tmp-Xy12Zw"; touch -d '2 hours ago' "$odir/$oid.tmp-Xy12Zw"
: >"$odir/$oid.tmp-Fresh1"
"$RESULTS" add "$T/in/p.pyisession" --commit "$SHA" --trigger partial >/dev/null
[ ! -e "$odir/$oid.tmp-Xy12Zw" ] || fail "a stale partial object stayed beside its object"
[ -e "$odir/$oid.tmp-Fresh1" ] || fail "a fresh partial object was removed"
rm "$odir/$oid.tmp-Fresh1"
# The grace period is configurable.
git config results.tmpGracePeriod 60
"$RESULTS" add "$T/in/other.pyisession" --commit "$SHA" --trigger grace >/dev/null
[ ! -e .git/lfs/tmp/results-1-2-ffff0 ] || fail "results.tmpGracePeriod=60 should remove a 10-minute-old file"
git config results.tmpGracePeriod soon
expect_status 2 "$RESULTS" add "$T/in/other.pyisession" --commit "$SHA" --trigger grace2
has "results.tmpGracePeriod" "$T/err" || fail "bad grace message: $(cat "$T/err")"
git config --unset results.tmpGracePeriod
consistent "at the end"
pass "stale temporary files removed by age, owner and name; fresh and foreign ones kept"

# --- kills at every rename, in a sparse index -----------------------------
git clone -q --no-checkout "file://$T/repo" "$T/sparse" 2>/dev/null
cd "$T/sparse"
results_repo_setup_config() {
	git config results.remote "file://$T/store"
	git config lfs.standalonetransferagent results
	git config lfs.customtransfer.results.path "$AGENT"
}
results_repo_setup_config
git config core.sparseCheckout true
git config core.sparseCheckoutCone true
git config index.sparse true
printf '/*\n!/*/\n' >.git/info/sparse-checkout
GIT_LFS_SKIP_SMUDGE=1 git read-tree -mu HEAD
git ls-files --sparse | grep -qx 'runs/' || fail "git wrote no sparse index"
sparse_consistent() {
	[ -z "$(git status --porcelain --untracked-files=all)" ] ||
		fail "$1: work tree not clean: $(git status --porcelain --untracked-files=all | head -3)"
	git fsck --no-progress >/dev/null 2>"$T/fsck.err" || { cat "$T/fsck.err"; fail "$1: git fsck"; }
	[ "$(git write-tree)" = "$(git rev-parse 'HEAD^{tree}')" ] || fail "$1: the index is not HEAD's"
	[ "$(git ls-files --sparse -s | grep -c '^040000 .*	runs/$')" = 1 ] ||
		fail "$1: runs/ is no longer a sparse folder: $(git ls-files --sparse | head -5)"
	[ ! -e runs ] || fail "$1: files in runs/: $(find runs -type f | head -3)"
	[ ! -e .git/results/commit-journal ] || fail "$1: the journal was left"
}
sparse_consistent "the sparse clone"
n=1
while :; do
	before=$(git rev-parse HEAD)
	runs_before=$(runs_count)
	gen --seed $((300 + n)) --size 64K -o "$T/in/s$n.pyisession"
	rc=0
	traced -f -qq -o /dev/null -e trace=rename,renameat,renameat2 \
		-e inject=rename,renameat,renameat2:signal=KILL:when=$n \
		"$RESULTS" add "$T/in/s$n.pyisession" --commit "$SHA" --trigger s$n \
		>"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] && break
	[ "$rc" = 137 ] || { cat "$T/err"; fail "sparse, rename #$n: exit $rc, want a kill"; }
	st=$(git status --porcelain --untracked-files=all)
	echo "$st" | has -E '^(D|.D) ' && fail "sparse, rename #$n: a run file shows as deleted: $st"
	moved=0
	[ "$(git rev-parse HEAD)" != "$before" ] && moved=1
	"$RESULTS" add "$T/in/s$n.pyisession" --commit "$SHA" --trigger t$n >"$T/out" 2>"$T/err" \
		|| { cat "$T/err"; fail "sparse, rename #$n: the next add failed"; }
	sparse_consistent "sparse, after a kill at rename #$n"
	[ "$(runs_count)" = $((runs_before + 1 + moved)) ] ||
		fail "sparse, rename #$n: runs $(runs_count), want $((runs_before + 1 + moved))"
	echo "  sparse index, kill at rename #$n: status $( [ -n "$st" ] && echo "$st" | tr '\n' ' ' || echo clean)," \
		"branch moved: $moved; repaired"
	n=$((n + 1))
	[ "$n" -le 40 ] || fail "results add never ran to the end"
done
sparse_consistent "sparse, the last add"
[ "$n" -ge 4 ] || fail "only $((n - 1)) renames were tried in the sparse clone"
pass "sparse index: killed at each of its $((n - 1)) renames, the next add repairs, the index stays sparse"
echo "all crash and leftover checks passed"
