#!/bin/bash
# results add FOLDER and symbolic links: a notes.html in a run folder that
# links to a credentials file must not get the secret committed (run.json,
# summary.md, the file itself, an LFS object) nor printed; the add is
# refused with exit 2 naming the link. Also a symlinked session inside the
# folder, a link loop inside the folder and one given as the argument (2).
# A session named directly on the command line may be a symlink: the user
# chose it, and it is followed (docs/cli.md).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_add_symlinks

ok() { echo "ok - $*"; }
SECRET=h9-SECRET-TOKEN-4242
SHA=3333333333333333333333333333333333333333

gen --seed 3 --size 100K -o "$T/a.pyisession"
printf 'aws_secret_access_key = %s\n' "$SECRET" >"$T/credentials"
git init -q --bare "$T/origin.git"
git clone -q "$T/origin.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$T/store" >/dev/null
START=$(git rev-parse HEAD)

# The secret appears nowhere in the repository (any commit, any object,
# LFS store and its tmp) nor in what results printed.
no_secret() {
	! grep -r "$SECRET" "$T/out" "$T/err" >/dev/null || fail "$1: the secret was printed"
	[ "$(git rev-parse HEAD)" = "$START" ] || fail "$1: a commit was made"
	! git log -p --all | grep "$SECRET" >/dev/null || fail "$1: the secret is in git log -p"
	! git grep "$SECRET" $(git rev-list --all) >/dev/null || fail "$1: git grep finds the secret"
	! grep -r "$SECRET" .git runs index 2>/dev/null | grep . >/dev/null ||
		fail "$1: the secret is under .git or in the work tree"
	[ -z "$(find .git/lfs/tmp -type f 2>/dev/null)" ] || fail "$1: temporary files left"
}

# refused DIR SAYS WHAT: `results add DIR` exits 2 with a message that has
# SAYS, and the secret is nowhere (WHAT names the case).
refused() {
	expect_status 2 "$RESULTS" add "$1" --commit $SHA
	grep -q "$2" "$T/err" || fail "message: $(cat "$T/err")"
	no_secret "$3"
}

# --- a notes.html linking to a credentials file -------------------------
mkdir "$T/run1"
cp "$T/a.pyisession" "$T/run1/"
ln -s "$T/credentials" "$T/run1/notes.html"
refused "$T/run1" "'$T/run1/notes.html' is a symbolic link" "notes.html link"
[ "$(wc -l <"$T/err")" = 1 ] || fail "more than one line: $(cat "$T/err")"
ok "a symlinked notes.html is refused, the secret is nowhere"

# The same with --raw and with a stats file linking to the secret.
expect_status 2 "$RESULTS" add "$T/run1" --commit $SHA --raw
no_secret "notes.html link, --raw"
rm "$T/run1/notes.html"
ln -s "$T/credentials" "$T/run1/x.stats.json"
refused "$T/run1" "x.stats.json' is a symbolic link" "stats link"
rm "$T/run1/x.stats.json"
ok "a symlinked stats file is refused"

# --- the session itself a symlink inside the folder ----------------------
mkdir "$T/run2"
ln -s "$T/a.pyisession" "$T/run2/a.pyisession"
refused "$T/run2" "run2/a.pyisession' is a symbolic link" "session link in folder"
ok "a symlinked session inside the folder is refused"

# --- symlink loops: in the folder, and as the argument --------------------
mkdir "$T/run3"
cp "$T/a.pyisession" "$T/run3/"
ln -s loop2 "$T/run3/loop1"
ln -s loop1 "$T/run3/loop2"
refused "$T/run3" "run3/loop1' is a symbolic link" "loop in folder"
ln -s loopB "$T/loopA"
ln -s loopA "$T/loopB"
refused "$T/loopA" "'$T/loopA' is a symbolic link loop" "loop as argument"
ok "symlink loops exit 2"

# --- a session named directly may be a symlink: followed ------------------
ln -s "$T/a.pyisession" "$T/direct.pyisession"
expect_status 0 "$RESULTS" add "$T/direct.pyisession" --commit $SHA
git show --name-only --format= HEAD | grep -q '/direct.pyisession$' || fail "direct link not recorded"
oid=$(sha256sum "$T/a.pyisession" | cut -d' ' -f1)
[ -f ".git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid" ] || fail "direct link: no LFS object"
ok "a symlink named on the command line is followed"
