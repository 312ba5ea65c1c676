#!/usr/bin/env bash
# `results add` and the clone's .git/index (issue 21): the add splices the
# index (src/git/indexfile.c) instead of loading it, and leaves it as git
# would:
#  - in a full clone and in a sparse one (old run folders skip-worktree),
#    after an add `git status --porcelain` shows nothing, `git diff
#    --cached` is empty, the index holds exactly HEAD's files (modes and
#    ids), the untouched entries keep their skip-worktree bit, and the
#    cache tree is kept: `git write-tree` gives HEAD's tree, and folders
#    the add did not touch stay valid in it;
#  - a change the user staged elsewhere stays staged and out of the commit;
#  - the add does not read the index whole (strace: bytes read() from
#    .git/index, which libgit2's load reads entirely);
#  - an index of version 4 (prefix-compressed paths) is spliced too, not
#    read whole, and stays version 4; a sparse index in version 4 too;
#  - git's sparse index (index.sparse, cone mode: what `results clone`
#    makes; libgit2 refuses it): the add splices it too, writes no file
#    into the collapsed folders, and leaves it as git's `read-tree -m -u`
#    of the new commit would: the sparse folders "runs/" and "index/" one
#    entry each (`git ls-files --sparse -s` is HEAD's top-level tree),
#    status and diff --cached empty, the cache tree HEAD's, a change the
#    user staged kept, the index never read() (it is mapped); a folder
#    the index has no entry for yet (the first run) becomes a sparse
#    folder entry too;
#  - the run folder's own .gitattributes follows the committed attributes.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_add_index

command -v strace >/dev/null || fail "strace is needed (scripts/install-deps.sh)"
gen --seed 1 --samples 200 -o "$T/s.pyisession"
CLOCK=1764500000
add() { # add SHA-DIGIT: one run recorded, an hour after the previous one
	CLOCK=$((CLOCK + 3600))
	RESULTS_RECORDED_AT=$CLOCK expect_status 0 "$RESULTS" add "$T/s.pyisession" \
		--commit "$(printf '%s%039d' "$1" 0)" --branch main --trigger nightly
}

# The cache tree of the index: "valid <dir>" / "invalid <dir>" per node.
tree_nodes() {
	python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
sig, ver, n = struct.unpack('>4sII', b[:12])
assert sig == b'DIRC' and ver in (2, 3), (sig, ver)
off = 12
for _ in range(n):
    flags = struct.unpack('>H', b[off + 60:off + 62])[0]
    name = off + 62 + (2 if flags & 0x4000 else 0)
    off += (name - off + b.index(b'\0', name) - name + 8) & ~7
tree = None
while off < len(b) - 20:
    s, size = struct.unpack('>4sI', b[off:off + 8])
    if s == b'TREE':
        tree = b[off + 8:off + 8 + size]
    off += 8 + size
if tree is None:
    print('none')
    sys.exit(0)
pos = 0
def node(prefix):
    global pos
    e = tree.index(b'\0', pos); name = tree[pos:e].decode(); pos = e + 1
    e = tree.index(b'\n', pos); count, subs = map(int, tree[pos:e].split(b' ')); pos = e + 1
    d = prefix + name + '/' if name else prefix
    if count >= 0:
        pos += 20
    print(('valid ' if count >= 0 else 'invalid ') + (d or '/'))
    for _ in range(subs):
        node(d)
node('')
EOF
}

# check_clean WHAT: the invariants after an add
check_clean() {
	[ -z "$(git status --porcelain)" ] || { git status --porcelain | head >&2; fail "$1: git status is not clean"; }
	git diff --cached --quiet || fail "$1: git diff --cached is not empty"
	[ "$(git write-tree)" = "$(git rev-parse 'HEAD^{tree}')" ] ||
		fail "$1: the index's tree (cache tree) is not HEAD's"
	diff <(git ls-files -s | awk '{print $1, $2, $4}') \
		<(git ls-tree -r HEAD | awk '{print $1, $3, $4}') >/dev/null ||
		fail "$1: the index does not hold exactly HEAD's files"
}

# --- a results repository with 2,000 older runs' files ---------------------
results_repo "$T/full"
python3 - <<'EOF'
import os
for d in range(20):
    for r in range(100):
        p = 'runs/2025/01/%02d/%06d-nightly-old' % (d + 1, r)
        os.makedirs(p)
        with open(p + '/run.json', 'w') as f:
            f.write('{"old": %d}\n' % (d * 100 + r))
EOF
git add runs && git commit -qm "older runs"
# the cache tree as git writes it
git read-tree HEAD
tree_nodes .git/index >"$T/nodes"
grep -qx 'valid runs/2025/01/05/' "$T/nodes" || fail "git wrote no cache tree"

# --- full clone ------------------------------------------------------------
add a
# (before any git command, which may write the index and its cache tree again)
tree_nodes .git/index >"$T/nodes"
check_clean "full clone"
run=$(git show --name-only --format= HEAD | grep '/run.json$' | xargs dirname)
grep -q " $run/\$" "$T/nodes" && fail "the cache tree has a node for the new run folder"
grep -qx 'invalid /' "$T/nodes" || fail "the root of the cache tree is still valid: $(head -3 "$T/nodes")"
grep -qx "invalid runs/2025/" "$T/nodes" || fail "the new run's year is still valid in the cache tree"
grep -qx 'valid runs/2025/01/05/' "$T/nodes" || fail "the cache tree of untouched folders was dropped"
pass "full clone: status clean, the index is HEAD's, cache tree kept and invalidated"

# a change staged elsewhere stays staged, out of the commit
echo "a note" >notes.txt
git add notes.txt
add b
git show --name-only --format= HEAD | grep -qx notes.txt && fail "the staged file went into the commit"
[ "$(git diff --cached --name-only)" = notes.txt ] || fail "the staged file is no longer staged"
git rm -q --cached notes.txt && rm notes.txt
check_clean "after the staged note"
pass "a change staged by the user stays staged"

# not read whole: the index is mapped and spliced, never loaded
size=$(stat -c %s .git/index)
CLOCK=$((CLOCK + 3600))
# (LeakSanitizer cannot run under ptrace: leaks are checked by the other adds)
RESULTS_RECORDED_AT=$CLOCK ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -y -e trace=read,pread64 -o "$T/trace" "$RESULTS" add \
	"$T/s.pyisession" --commit "$(printf 'c%039d' 0)" --branch main --trigger nightly >/dev/null 2>&1 ||
	fail "the add under strace failed"
read_bytes=$(awk '/\.git\/index>/ && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$T/trace")
[ "$read_bytes" -lt $((size / 4)) ] ||
	fail "the add read $read_bytes bytes of the $size-byte index: it loaded the index"
check_clean "after the add under strace"
pass "the add does not load the index ($read_bytes of $size bytes read)"

# --- sparse clone: old run folders skip-worktree ----------------------------
git clone -q "$T/full" "$T/sparse" 2>/dev/null
cd "$T/sparse"
results_repo_setup_clone() {
	git config results.remote "file://$T/store"
	git config lfs.standalonetransferagent results
	git config lfs.customtransfer.results.path "$AGENT"
}
results_repo_setup_clone
git config core.sparseCheckout true
printf '/*\n!/runs/\n' >.git/info/sparse-checkout
GIT_LFS_SKIP_SMUDGE=1 git read-tree -mu HEAD
[ ! -e runs/2025 ] || fail "the sparse checkout left runs/ in the work tree"
skipped=$(git ls-files -t | grep -c '^S ')
[ "$skipped" -ge 2000 ] || fail "only $skipped skip-worktree entries"
add d
check_clean "sparse clone"
[ "$(git ls-files -t | grep -c '^S ')" = "$skipped" ] ||
	fail "the untouched entries lost their skip-worktree bit"
git ls-files -t -- "$(git show --name-only --format= HEAD | grep '/run.json$')" | grep -q '^H ' ||
	fail "the new run.json is not an ordinary (checked-out) entry"
add e
check_clean "sparse clone, second add"
pass "sparse clone: status clean, skip-worktree entries kept"

# --- a sparse index (cone mode), as results clone makes it ------------------
# sparse_clone SRC DIR: a clone of SRC with git's sparse index, top-level files only
sparse_clone() {
	git clone -q --no-checkout "file://$1" "$2" 2>/dev/null
	cd "$2"
	results_repo_setup_clone
	git config core.sparseCheckout true
	git config core.sparseCheckoutCone true
	git config index.sparse true
	printf '/*\n!/*/\n' >.git/info/sparse-checkout
	GIT_LFS_SKIP_SMUDGE=1 git read-tree -mu HEAD
}
# check_sparse WHAT: the index is sparse and as git writes it for HEAD
check_sparse() {
	check_clean "$1"
	python3 -c 'import sys; b = open(".git/index", "rb").read(); sys.exit(b"sdir" not in b[-40:])' ||
		fail "$1: the index is no longer sparse"
	diff <(git ls-files --sparse -s | awk '{print $1, $2, $4}') \
		<(git ls-tree HEAD | awk '{print $1, $3, $4 ($2 == "tree" ? "/" : "")}') >"$T/sdiff" ||
		{ cat "$T/sdiff" >&2; fail "$1: the sparse index is not HEAD's top-level tree with its folders collapsed"; }
	[ ! -e runs ] && [ ! -e index ] || fail "$1: the add wrote into a collapsed folder: $(ls)"
}
sparse_clone "$T/full" "$T/sidx"
git ls-files --sparse | grep -qx 'runs/' || fail "git wrote no sparse index: $(git ls-files --sparse | head -3)"
add 1
check_sparse "sparse index"
echo "a note" >notes.txt
git add notes.txt
add 2
git show --name-only --format= HEAD | grep -qx notes.txt && fail "sparse index: the staged file went into the commit"
[ "$(git diff --cached --name-only)" = notes.txt ] || fail "sparse index: the staged file is no longer staged"
git ls-files --sparse | grep -qx 'runs/' || fail "sparse index: runs/ was expanded"
git rm -q --cached notes.txt && rm notes.txt
check_sparse "sparse index, after the staged note"
CLOCK=$((CLOCK + 3600))
RESULTS_RECORDED_AT=$CLOCK ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -y -e trace=read,pread64 -o "$T/trace" "$RESULTS" add \
	"$T/s.pyisession" --commit "$(printf "4%039d" 0)" --branch main --trigger nightly >/dev/null 2>"$T/err" ||
	fail "the add under strace in the sparse index failed: $(cat "$T/err")"
read_bytes=$(awk '/\.git\/index>/ && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$T/trace")
[ "$read_bytes" = 0 ] || fail "the add read $read_bytes bytes of the sparse index: it loaded it"
check_sparse "sparse index, after the add under strace"
pass "sparse index: status clean, folders kept collapsed, staged change kept, not read ($(stat -c %s .git/index) bytes)"
# a sparse folder whose entry is neither HEAD's tree nor the new one: the
# user's staged change, which the add refuses to overwrite (as a staged file)
head=$(git rev-parse HEAD)
git reset -q --soft HEAD~1
CLOCK=$((CLOCK + 3600))
RESULTS_RECORDED_AT=$CLOCK expect_status 2 "$RESULTS" add "$T/s.pyisession" \
	--commit "$(printf '7%039d' 0)" --branch main --trigger nightly
grep -q "'runs/' has staged changes that the commit would overwrite" "$T/err" ||
	fail "a staged sparse folder: $(cat "$T/err")"
[ "$(git ls-files --sparse -s | awk '$4 == "runs/" { print $2 }')" = "$(git rev-parse "$head:runs")" ] ||
	fail "the refused add changed the staged runs/ entry"
git reset -q --soft "$head"
check_sparse "sparse index, after the refused add"
pass "sparse index: a staged change of a collapsed folder is refused, not overwritten"

# a results repository with no runs yet: the first add makes the runs/ entry
results_repo "$T/fresh"
sparse_clone "$T/fresh" "$T/sfresh"
git ls-files --sparse | grep -q / && fail "the fresh clone has a folder: $(git ls-files --sparse)"
add 3
check_sparse "sparse index, the first run"
git ls-files --sparse -s | grep -q '^040000 .* 0	runs/$' || fail "the first run made no sparse runs/ entry: $(git ls-files --sparse -s)"
pass "sparse index: the first run's folder becomes a sparse folder entry, as git writes it"
cd "$T/sparse"

# --- an index of version 4 is spliced too ----------------------------------
git update-index --index-version 4
add f
check_clean "index version 4"
size=$(stat -c %s .git/index)
CLOCK=$((CLOCK + 3600))
RESULTS_RECORDED_AT=$CLOCK ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -y -e trace=read,pread64 -o "$T/trace" "$RESULTS" add \
	"$T/s.pyisession" --commit "$(printf '5%039d' 0)" --branch main --trigger nightly >/dev/null 2>"$T/err" ||
	fail "the add under strace in index version 4 failed: $(cat "$T/err")"
read_bytes=$(awk '/\.git\/index>/ && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$T/trace")
[ "$read_bytes" -lt $((size / 4)) ] || fail "the add read $read_bytes bytes of the $size-byte v4 index"
[ "$(od -An -tu1 -j7 -N1 .git/index | tr -d ' ')" = 4 ] || fail "the index is no longer version 4"
check_clean "index version 4, after the add under strace"
[ "$(git ls-files -t | grep -c '^S ')" -ge 2000 ] || fail "version 4: the skip-worktree entries lost their bit"
pass "index version 4 is spliced ($read_bytes of $size bytes read), stays version 4 and clean"
(
	cd "$T/sidx"
	git update-index --index-version 4
	add 6
	check_sparse "a sparse index in version 4"
	[ "$(od -An -tu1 -j7 -N1 .git/index | tr -d ' ')" = 4 ] || fail "the sparse index is no longer version 4"
)
pass "a sparse index in version 4 is spliced too"

# --- the run folder's .gitattributes follows the committed attributes -------
git config core.sparseCheckout false
git read-tree -mu HEAD
cp "$T/s.pyisession" "$T/s.session"
CLOCK=$((CLOCK + 3600))
RESULTS_RECORDED_AT=$CLOCK expect_status 0 "$RESULTS" add "$T/s.session" \
	--commit "$(printf 'e%039d' 0)" --branch main --trigger nightly
git show --name-only --format= HEAD | grep -q '/\.gitattributes$' ||
	fail "a session not named *.pyisession got no .gitattributes line"
check_clean "a session with another name"
CLOCK=$((CLOCK + 3600))
add 9
git show --name-only --format= HEAD | grep -q '/\.gitattributes$' &&
	fail "a *.pyisession session got a .gitattributes line although .gitattributes has one"
pass "a run folder's .gitattributes follows the committed attributes"
