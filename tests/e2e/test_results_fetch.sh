#!/bin/bash
# results fetch, end to end: a CI clone records two runs (results add) and
# pushes them through lfs-agent; a developer's plain clone + `results init`
# holds no session content; `results fetch <sha>` brings exactly that one
# session, byte-identical, into the LFS store and the working tree, or into
# -o DIR; errors give their documented exit statuses.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_results_fetch

one_line_error() {
	[ "$(wc -l < "$T/err")" = 1 ] || fail "error is not one line: $(cat "$T/err")"
	grep -q '^results: ' "$T/err" || fail "error does not start with 'results: '"
}

unset GIT_DIR GIT_WORK_TREE

git init -q --bare "$T/results.git"
STORE="$T/store"
SHA1=1111111111111111111111111111111111111111
SHA2=2222222222222222222222222222222222222222
SHA3=2222333333333333333333333333333333333333

gen --seed 1 --size 2M -o "$T/a.pyisession"
gen --seed 2 --size 1M -o "$T/b.pyisession"

git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$STORE" >/dev/null
RESULTS_RECORDED_AT=1764494000 "$RESULTS" add "$T/a.pyisession" --commit $SHA1 --trigger ci >/dev/null
RESULTS_RECORDED_AT=1764494100 "$RESULTS" add "$T/b.pyisession" --commit $SHA2 --trigger ci >/dev/null
RESULTS_RECORDED_AT=1764494200 "$RESULTS" add "$T/b.pyisession" --commit $SHA3 --trigger ci >/dev/null
git push -q origin main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }

# A developer: plain clone, bare init. No session content in the clone.
git clone -q "$T/results.git" "$T/dev" 2>"$T/clone.err" || { cat "$T/clone.err"; fail "clone"; }
cd "$T/dev"
"$RESULTS" init >/dev/null
[ -z "$(find .git/lfs/objects -type f 2>/dev/null | head -n 1)" ] || fail "the clone holds LFS objects"
size_kb=$(du -sk .git | cut -f1)
[ "$size_kb" -lt 1024 ] || fail "the clone is ${size_kb} KB: sessions came along"

# fetch by a sha prefix: exactly one object, byte-identical, in place.
expect_status 0 "$RESULTS" fetch 1111111
path=$(cat "$T/out")
[ -f "$path" ] || fail "fetch printed '$path', which is not a file"
cmp -s "$path" "$T/a.pyisession" || fail "fetched session differs"
[ "$(find .git/lfs/objects -type f | wc -l)" = 1 ] || fail "fetch moved more than one object"
oid=$(sha256sum "$T/a.pyisession" | cut -d' ' -f1)
cmp -s ".git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid" "$T/a.pyisession" || fail "LFS store copy"
[ -z "$(git status --porcelain)" ] || fail "working tree not clean after fetch: $(git status --porcelain)"
# Again: nothing to download, same answer.
expect_status 0 "$RESULTS" fetch 1111111
[ "$(cat "$T/out")" = "$path" ] || fail "second fetch printed $(cat "$T/out")"

# -o DIR by run id: the repository is left alone.
id=$(git show HEAD:index/$(date -u -d @1764494100 +%Y-%m).jsonl | sed -n "s/.*\"id\": *\"\([^\"]*\)\".*\"commit\": *\"$SHA2\".*/\1/p")
[ -n "$id" ] || id=$(git show HEAD:index/$(date -u -d @1764494100 +%Y-%m).jsonl | grep "$SHA2" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
[ -n "$id" ] || fail "cannot find the run id of $SHA2 in the index"
expect_status 0 "$RESULTS" fetch "$id" -o "$T/out-dir"
[ "$(cat "$T/out")" = "$T/out-dir/$id/b.pyisession" ] || fail "-o printed $(cat "$T/out")"
cmp -s "$T/out-dir/$id/b.pyisession" "$T/b.pyisession" || fail "-o session differs"
[ "$(find .git/lfs/objects -type f | wc -l)" = 1 ] || fail "-o touched the LFS store"

# A damaged object in the local LFS store is caught when copied out.
obj=".git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid"
cp "$obj" "$T/obj.saved"
chmod u+w "$obj"
printf 'XXXX' | dd of="$obj" bs=1 seek=1000 conv=notrunc 2>/dev/null
expect_status 7 "$RESULTS" fetch 1111111 -o "$T/out-damaged"
one_line_error
[ -z "$(find "$T/out-damaged" -type f 2>/dev/null)" ] || fail "a damaged copy was left"
cp "$T/obj.saved" "$obj"

# Errors: one line each, distinct statuses.
expect_status 2 "$RESULTS" fetch
expect_status 4 "$RESULTS" fetch 9999999
one_line_error
expect_status 4 "$RESULTS" fetch 2222            # two commits start with 2222
grep -q "ambiguous\|several\|more than one" "$T/err" || fail "ambiguity not explained: $(cat "$T/err")"
(cd "$T" && expect_status 3 "$RESULTS" fetch 1111111)
one_line_error
# Object missing on the remote: remove the store's manifests.
mv "$STORE" "$T/store.saved"
mkdir "$STORE"
cp "$T/store.saved/FORMAT" "$STORE/" 2>/dev/null || true
expect_status 6 "$RESULTS" fetch 2222222 -o "$T/out-missing"
one_line_error
[ -z "$(find "$T/out-missing" -type f 2>/dev/null)" ] || fail "a failed fetch left a file"
# Remote unreachable: a store "folder" that is a file.
echo not-a-folder > "$T/not-a-store"
git config results.remote "file://$T/not-a-store"
expect_status 5 "$RESULTS" fetch 2222222 -o "$T/out-missing"
one_line_error
# A mistyped folder remote: said so, and the folder is not created.
git config results.remote "file://$T/typo-store"
expect_status 5 "$RESULTS" fetch 2222222 -o "$T/out-missing"
one_line_error
grep -q "'file://$T/typo-store' holds no results store (no FORMAT file): check results.remote" "$T/err" ||
	fail "unclear error for a mistyped folder remote: $(cat "$T/err")"
grep -q "push it" "$T/err" && fail "advice to push to a mistyped remote: $(cat "$T/err")"
[ ! -e "$T/typo-store" ] || fail "results fetch created the folder of a mistyped remote"
# A FORMAT past its cap (5 KB; a results store writes one short line):
# data that is not what it should be, 7, not a usage error (2).
mkdir "$T/big-format"
head -c 5000 /dev/zero | tr '\0' x >"$T/big-format/FORMAT"
git config results.remote "file://$T/big-format"
expect_status 7 "$RESULTS" fetch 2222222 -o "$T/out-missing"
one_line_error
grep -q "more than the 4096" "$T/err" || fail "unclear error for a huge FORMAT: $(cat "$T/err")"
# A FORMAT that is no format (garbage): 7, and the message says to upgrade.
printf 'not a results store\n' >"$T/big-format/FORMAT"
expect_status 7 "$RESULTS" fetch 2222222 -o "$T/out-missing"
grep -q "upgrade results" "$T/err" || fail "no advice to upgrade: $(cat "$T/err")"
# A store of a newer format: 9 (written by a newer results), never damage.
printf 'results-store 99\n' >"$T/big-format/FORMAT"
expect_status 9 "$RESULTS" fetch 2222222 -o "$T/out-missing"
grep -q "upgrade results" "$T/err" || fail "no advice to upgrade: $(cat "$T/err")"
rm -rf "$STORE"
mv "$T/store.saved" "$STORE"
git config results.remote "file://$STORE"
# Corrupt data: damage every pack; the fetch must fail and leave nothing.
find "$STORE" -name '*.pack' -exec sh -c 'printf "XXXXXXXXXXXXXXXX" | dd of="$1" bs=1 seek=200 conv=notrunc 2>/dev/null' _ {} \;
expect_status 7 "$RESULTS" fetch 2222222 -o "$T/out-corrupt"
[ -z "$(find "$T/out-corrupt" -type f 2>/dev/null)" ] || fail "a corrupt fetch left a file"
grep -q "do not delete it" "$T/err" || fail "no advice to keep the manifest: $(cat "$T/err")"

echo "ok: test_results_fetch"
