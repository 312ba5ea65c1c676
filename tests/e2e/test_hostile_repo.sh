#!/bin/bash
# Hostile results repositories, built with git plumbing (hash-object,
# mktree, commit-tree, update-ref): names in the committed index and
# run.json that would lead a write out of its folder or into .git, and
# symlinks a hostile tree checks out where fetch writes. Every command
# that turns committed names into paths (fetch with and without -o, site,
# show, export) must refuse with exit 7 and write nothing outside DIR:
# the victim files are checked byte for byte afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_hostile_repo

has() { grep "$@" >/dev/null; }
ok() { echo "ok - $*"; }

SHA=1111111111111111111111111111111111111111
gen --seed 1 --size 200K -o "$T/a.pyisession"

git init -q --bare "$T/origin.git"
git clone -q "$T/origin.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$T/store" >/dev/null
RESULTS_RECORDED_AT=1764494000 "$RESULTS" add "$T/a.pyisession" --commit $SHA --trigger ci >/dev/null
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }
GOOD=$(git rev-parse HEAD)
RUN=$(git ls-tree -r --name-only HEAD | grep '/run.json$' | xargs dirname)
SHARD=$(git ls-tree -r --name-only HEAD index/ | grep -vE '^index/(branches|commits)/')
ID=$(git show "HEAD:$SHARD" | jq -r .id)
PTR=$(git rev-parse "HEAD:$RUN/a.pyisession")
[ -n "$RUN" ] && [ -n "$ID" ] && [ -n "$PTR" ] || fail "set-up: no run recorded"

# Victims: files a hostile repository must never reach.
printf 'export PATH=/usr/bin\n' >"$HOME/.bashrc"
cp "$HOME/.bashrc" "$T/bashrc.orig"
mkdir -p "$T/victim" "$T/victim2"
printf 'not for you\n' >"$T/secret"
check_victims() {
	cmp -s "$HOME/.bashrc" "$T/bashrc.orig" || fail "$1: ~/.bashrc was changed"
	[ ! -e "$T/escape" ] || fail "$1: wrote $T/escape"
	[ ! -e "$T/x/escape" ] || fail "$1: wrote $T/x/escape"
	[ ! -e "$T/ci/.git/info/attributes" ] || fail "$1: wrote .git/info/attributes"
	[ -z "$(find "$T/victim" "$T/victim2" -mindepth 1)" ] || fail "$1: wrote into a symlinked folder"
	[ "$(cat "$T/secret")" = "not for you" ] || fail "$1: the secret file changed"
}

blob() { git hash-object -w --stdin; }

# tree_put TREE PATH MODE OID: TREE with the blob OID at PATH (mode MODE).
# git mktree, unlike git update-index, takes any name: '.git', '..'.
tree_put() {
	local tree=$1 path=$2 mode=$3 oid=$4 head entries entry sub
	head=${path%%/*}
	entries=$(git ls-tree "$tree" | awk -F'\t' -v n="$head" '$2 != n')
	if [ "$head" = "$path" ]; then
		entry=$(printf '%s blob %s\t%s' "$mode" "$oid" "$head")
	else
		sub=$(git ls-tree "$tree" | awk -F'\t' -v n="$head" '$2 == n { split($1, a, " "); if (a[2] == "tree") print a[3] }')
		[ -n "$sub" ] || sub=$(git mktree </dev/null)
		sub=$(tree_put "$sub" "${path#*/}" "$mode" "$oid")
		entry=$(printf '040000 tree %s\t%s' "$sub" "$head")
	fi
	{ [ -z "$entries" ] || printf '%s\n' "$entries"; printf '%s\n' "$entry"; } | git mktree
}

# commit_tree TREE: make it main's commit, on top of the good one, without
# touching the work tree (as a `git fetch` + fast-forward of refs would).
commit_tree() {
	local c
	c=$(git commit-tree -p "$GOOD" -m hostile "$1")
	git update-ref refs/heads/main "$c"
}

# hostile_index JQ-FILTER: the index line rewritten by JQ-FILTER.
index_with() { git show "$GOOD:$SHARD" | jq -c "$1" | blob; }
run_json_with() { git show "$GOOD:$RUN/run.json" | jq "$1" | blob; }
BASE=$(git rev-parse "$GOOD^{tree}")

# --- 1: run id '../../home' plus a pointer renamed '.bashrc' -----------
# Before the fix, fetch -o "$T/x/DIR" wrote the session over ~/.bashrc.
t=$(tree_put "$BASE" "$SHARD" 100644 "$(index_with '.id = "../../home"')")
t=$(tree_put "$t" "$RUN/.bashrc" 100644 "$PTR")
t=$(tree_put "$t" "$RUN/run.json" 100644 \
	"$(run_json_with '.files[0].path = ".bashrc" | .session.path = ".bashrc"')")
commit_tree "$t"
mkdir -p "$T/x"
expect_status 7 "$RESULTS" fetch "$SHA" -o "$T/x/DIR"
has "run id '../../home' is not a plain name" "$T/err" || fail "message: $(cat "$T/err")"
has "index/" "$T/err" || fail "the message does not name the index shard: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 1 ] || fail "more than one line: $(cat "$T/err")"
check_victims "fetch -o, run id ../../home"
[ ! -e "$T/x/DIR" ] || fail "fetch created DIR for a refused run"
expect_status 7 "$RESULTS" fetch "$SHA"
check_victims "fetch, run id ../../home"
expect_status 7 "$RESULTS" site "$T/site"
has "run id '../../home'" "$T/err" || fail "site message: $(cat "$T/err")"
[ ! -e "$T/home.html" ] && [ ! -e "$T/site/home.html" ] || fail "site wrote a page for the run"
expect_status 7 "$RESULTS" show "$SHA"
expect_status 7 "$RESULTS" export "$SHA" --format collapsed -o "$T/export.txt"
check_victims "site/show/export, run id ../../home"
ok "run id ../../home refused by fetch, site, show, export"

t=$(tree_put "$BASE" "$SHARD" 100644 "$(index_with '.id = "../../escape"')")
commit_tree "$t"
expect_status 7 "$RESULTS" fetch "$SHA" -o "$T/x/DIR"
has "run id '../../escape'" "$T/err" || fail "message: $(cat "$T/err")"
check_victims "fetch -o, run id ../../escape"
ok "run id ../../escape refused"

# --- 2: file names from run.json -------------------------------------
for name in ../x .bashrc .git sub/x '..' '.gitattributes' 'GIT~1'; do
	t=$(tree_put "$BASE" "$RUN/run.json" 100644 \
		"$(run_json_with ".files[0].path = \"$name\" | .session.path = \"$name\"")")
	commit_tree "$t"
	rm -rf "$T/out-dir"
	expect_status 7 "$RESULTS" fetch "$SHA" -o "$T/out-dir"
	has "$RUN/run.json: file name '$name' is not a plain name" "$T/err" || fail "message for '$name': $(cat "$T/err")"
	[ -z "$(find "$T/out-dir" -type f 2>/dev/null)" ] || fail "fetch -o wrote a file for '$name'"
	expect_status 7 "$RESULTS" fetch "$SHA"
	check_victims "file name $name"
done
ok "run.json file names ../x .bashrc .git sub/x .. refused"

# --- 3: an index path into .git: '.git/info' + 'attributes' ------------
# Before the fix, a plain `results fetch` wrote the session as
# .git/info/attributes of the user's clone (and export did, through fetch).
t=$(tree_put "$BASE" "$SHARD" 100644 "$(index_with '.path = ".git/info"')")
t=$(tree_put "$t" ".git/info/attributes" 100644 "$PTR")
t=$(tree_put "$t" ".git/info/run.json" 100644 \
	"$(run_json_with '.files[0].path = "attributes" | .session.path = "attributes"')")
t=$(tree_put "$t" ".git/info/summary.md" 100644 "$(git rev-parse "$GOOD:$RUN/summary.md")")
commit_tree "$t"
git ls-tree -r HEAD | has '	.git/info/attributes$' || fail "set-up: no .git/info/attributes entry"
[ ! -e .git/info/attributes ] || fail "set-up: .git/info/attributes exists"
expect_status 7 "$RESULTS" fetch "$SHA"
has "run path '.git/info' is not a safe relative path" "$T/err" || fail "message: $(cat "$T/err")"
check_victims "fetch, index path .git/info"
expect_status 7 "$RESULTS" fetch "$SHA" -o "$T/out-dir"
expect_status 7 "$RESULTS" export "$SHA" --format collapsed
expect_status 7 "$RESULTS" show "$SHA"
expect_status 7 "$RESULTS" site "$T/site"
check_victims "fetch -o/export/show/site, index path .git/info"
for p in '../runs/x' '/tmp/x' 'runs//x' 'runs/./x' 'runs/.GIT/x' 'runs/.git. /x' 'runs/x\\y'; do
	t=$(tree_put "$BASE" "$SHARD" 100644 "$(index_with ".path = \"$p\"")")
	commit_tree "$t"
	expect_status 7 "$RESULTS" fetch "$SHA"
	has "run path '" "$T/err" || fail "message for '$p': $(cat "$T/err")"
done
check_victims "index paths"
ok "index paths into .git or out of the repository refused"

# --- 4: symlinks a hostile tree checked out where fetch writes ----------
# First commit: runs/L and fetched/<id> are symlinks to victim folders,
# checked out by git. Then main moves on (no checkout) to a tree where
# runs/L/x is a run folder: fetch must not write through the symlinks.
git update-ref refs/heads/main "$GOOD"
t=$(tree_put "$BASE" runs/L 120000 "$(printf '%s' "$T/victim" | blob)")
t=$(tree_put "$t" "fetched/$ID" 120000 "$(printf '%s' "$T/victim2" | blob)")
c=$(git commit-tree -p "$GOOD" -m links "$t")
git reset -q --hard "$c"
[ -L runs/L ] && [ -L "fetched/$ID" ] || fail "set-up: git did not check out the symlinks"
t=$(tree_put "$BASE" "$SHARD" 100644 "$(index_with '.path = "runs/L/x"')")
t=$(tree_put "$t" runs/L/x/a.pyisession 100644 "$PTR")
t=$(tree_put "$t" runs/L/x/run.json 100644 "$(git rev-parse "$GOOD:$RUN/run.json")")
t=$(tree_put "$t" "fetched/$ID/keep" 100644 "$(printf 'x' | blob)")
git update-ref refs/heads/main "$(git commit-tree -p "$c" -m "run behind a link" "$t")"
expect_status 7 "$RESULTS" fetch "$SHA"
has "runs/L' is a symbolic link" "$T/err" || fail "message: $(cat "$T/err")"
check_victims "fetch through runs/L"
expect_status 7 "$RESULTS" fetch "$SHA" -o fetched
has "fetched/$ID' is a symbolic link" "$T/err" || fail "message: $(cat "$T/err")"
check_victims "fetch -o through fetched/<id>"
ok "symlinked folders in the work tree are not written through"

# A symlink tree entry (mode 120000) where the session pointer should be:
# its target is not a pointer, and it is never followed.
git reset -q --hard "$GOOD"
t=$(tree_put "$BASE" "$RUN/a.pyisession" 120000 "$(printf '%s' "$T/secret" | blob)")
commit_tree "$t"
expect_status 7 "$RESULTS" fetch "$SHA" -o "$T/out-link"
[ -z "$(find "$T/out-link" -type f 2>/dev/null)" ] || fail "fetch -o wrote for a symlink entry"
check_victims "symlink entry for the session"
ok "a symlink entry in a run folder is not a session"

# --- 5: an oversized run.json is corrupt data (7), not a usage error ---
head -c $((65 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$T/big.json"
t=$(tree_put "$BASE" "$RUN/run.json" 100644 "$(git hash-object -w "$T/big.json")")
rm -f "$T/big.json"
commit_tree "$t"
expect_status 7 "$RESULTS" show "$SHA" --json
has "too large" "$T/err" || fail "message: $(cat "$T/err")"
expect_status 7 "$RESULTS" fetch "$SHA" -o "$T/out-big"
expect_status 7 "$RESULTS" site "$T/site-big"
ok "an oversized run.json exits 7"

# An index line past its cap (64 KiB) is corrupt data too.
t=$(tree_put "$BASE" "$SHARD" 100644 "$(index_with '.metrics.pad = ("x" * 70000)')")
commit_tree "$t"
expect_status 7 "$RESULTS" list
has "index line longer than" "$T/err" || fail "message: $(cat "$T/err")"
expect_status 7 "$RESULTS" fetch "$SHA" -o "$T/out-big"
ok "an oversized index line exits 7"

# A symlink where fetch -o puts the session file itself is replaced, not
# followed (temporary name, then rename).
git update-ref refs/heads/main "$GOOD"
mkdir -p "$T/out-l/$ID"
ln -s "$T/secret" "$T/out-l/$ID/a.pyisession"
expect_status 0 "$RESULTS" fetch "$SHA" -o "$T/out-l"
[ -f "$T/out-l/$ID/a.pyisession" ] && [ ! -L "$T/out-l/$ID/a.pyisession" ] ||
	fail "the symlink at the output file was not replaced"
check_victims "symlink at the output file"
ok "a symlink at the output file is replaced, not written through"

# A run id that looks like an option is never taken for one when export
# fetches the session with a child 'results fetch'.
t=$(tree_put "$BASE" "$SHARD" 100644 "$(index_with '.id = "--help"')")
commit_tree "$t"
oid=$(git show "$GOOD:$RUN/a.pyisession" | sed -n 's/^oid sha256://p')
obj=.git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid
mv "$obj" "$T/obj.saved"
expect_status 0 "$RESULTS" export --format collapsed -o "$T/export.txt" -- --help
[ -s "$T/export.txt" ] || fail "export of run '--help' wrote nothing"
cmp -s "$obj" "$T/a.pyisession" || fail "the session was not fetched for run '--help'"
ok "a run id that looks like an option is fetched as a run"

# site: a runs/ folder below DIR that is a symlink (a hostile tree checked
# out under DIR) is not written through.
git update-ref refs/heads/main "$GOOD"
mkdir -p "$T/site-l"
ln -s "$T/victim" "$T/site-l/runs"
expect_status 7 "$RESULTS" site "$T/site-l"
has "site-l/runs' is a symbolic link" "$T/err" || fail "message: $(cat "$T/err")"
check_victims "site through runs/"
ok "site does not write through a symlinked runs/"

# The good run still fetches after all this.
git update-ref refs/heads/main "$GOOD"
expect_status 0 "$RESULTS" fetch "$SHA" -o "$T/out-good"
cmp -s "$T/out-good/$ID/a.pyisession" "$T/a.pyisession" || fail "the good run no longer fetches"
check_victims "good run"
ok "the good run fetches"
