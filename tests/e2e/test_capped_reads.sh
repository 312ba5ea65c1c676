#!/usr/bin/env bash
# Every committed file is read through a cap checked BEFORE it is read
# (issue 21): the size comes from the object's header, so that a hostile
# or runaway repository (a 300 MB index shard, a 300 MB run.json) is
# refused with exit 7 naming the file, and the command's memory stays far
# below the file's size.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_capped_reads
command -v python3 >/dev/null || fail "python3 is needed"

results_repo "$T/repo"
"$RESULTS" add "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_5.1.2.pyisession" \
	--commit 0123456789abcdef0123456789abcdef01234567 >/dev/null
run=$(ls -d runs/*/*/*/*)
# The bound: what gc takes on this good repository (the most of the
# commands below) plus 40 MB, at least 64 MB: far below any file read
# here (300 MB, 1 GB), and above what a sanitizer build adds to every
# command (gc takes about 60 MB under AddressSanitizer).
read -r base _ < <(peak "$RESULTS" gc --dry-run)
LIMIT=$((base + 40 > 64 ? base + 40 : 64))
# a 300 MB shard of an old month (compresses to almost nothing in git)
head -c 300000000 /dev/zero | tr '\0' ' ' >index/2020-01.jsonl
git add index/2020-01.jsonl && git commit -qm "a runaway shard"
rm -f index/2020-01.jsonl && git checkout -q -- index 2>/dev/null || true
read -r mb st < <(peak "$RESULTS" list --limit 0)
[ "$mb" -lt 120 ] || fail "list read the 300 MB shard: peak RSS $mb MB"
[ "$st" = 7 ] || fail "list with a 300 MB shard exited $st: $(cat "$T/err")"
grep -q "index/2020-01.jsonl' is too large" "$T/err" || fail "the message does not name the shard: $(cat "$T/err")"
pass "a 300 MB index shard: refused before it is read (exit 7, peak RSS $mb MB)"

git rm -q index/2020-01.jsonl && git commit -qm "shard gone"
id=$("$RESULTS" list --json | jq -r '.[0].id')
[ -n "$id" ] && [ "$id" != null ] || fail "no run id"
head -c 300000000 /dev/zero | tr '\0' ' ' >"$run/run.json"
git add "$run/run.json" && git commit -qm "a runaway run.json"
read -r mb st < <(peak "$RESULTS" show "$id" --json)
[ "$mb" -lt 120 ] || fail "show read the 300 MB run.json: peak RSS $mb MB"
[ "$st" = 7 ] || fail "show of a 300 MB run.json exited $st: $(cat "$T/err")"
grep -q "run.json' is too large" "$T/err" || fail "the message does not name run.json: $(cat "$T/err")"
pass "a 300 MB run.json: refused before it is read (exit $st, peak RSS $mb MB)"

# bigfile PATH BYTES MESSAGE: commit BYTES spaces at PATH with git fast-import
# (which streams a blob past core.bigFileThreshold to the pack: git hash-object
# would read it whole), the work tree left without it.
bigfile() {
	python3 - "$1" "$2" <<'PY' | git fast-import --quiet
import sys
path, n = sys.argv[1], int(sys.argv[2])
out = sys.stdout.buffer
out.write(b"commit refs/heads/main\ncommitter t <t@localhost> 1700000000 +0000\ndata 5\nhuge\n")
out.write(b"from refs/heads/main^0\n")
out.write(("M 100644 inline %s\ndata %d\n" % (path, n)).encode())
block = b" " * (1 << 20)
while n > 0:
    out.write(block[:min(n, len(block))]); n -= len(block)
out.write(b"\n")
PY
	git read-tree main # the index follows; the work tree never holds the file
}
git reset -q --hard HEAD~1 # the run.json as `add` wrote it
bigfile index/2019-01.jsonl $((1024 * 1024 * 1024))
read -r mb st < <(peak "$RESULTS" list --limit 0)
[ "$mb" -lt "$LIMIT" ] || fail "list read the 1 GB shard: peak RSS $mb MB"
[ "$st" = 7 ] || fail "list with a 1 GB shard exited $st: $(cat "$T/err")"
grep -q "index/2019-01.jsonl' is too large" "$T/err" || fail "the message does not name the shard: $(cat "$T/err")"
pass "a 1 GB index shard: refused before it is read (exit 7, peak RSS $mb MB)"
# A tag of that blob: gc and verify judge every ref, and look up only commits and tags.
big=$(git rev-parse HEAD:index/2019-01.jsonl)
git tag huge "$big"
git reset -q --hard HEAD~1
read -r mb st < <(peak "$RESULTS" gc --dry-run)
[ "$mb" -lt "$LIMIT" ] || fail "gc read the 1 GB blob a tag names: peak RSS $mb MB"
[ "$st" = 0 ] || fail "gc with a tag of a 1 GB blob exited $st: $(cat "$T/err")"
pass "a tag of a 1 GB blob: gc does not read it (peak RSS $mb MB)"
git tag -d huge >/dev/null
# An annotated tag of an annotated tag of it: peeled one header at a time
# (src/git/repo.c rs_repo_peel_commit), the blob never read.
git tag -a -m inner huge-inner "$big"
git -c advice.nestedTag=false tag -a -m outer huge-nested huge-inner
git tag -d huge-inner >/dev/null
[ "$(git cat-file -t "$(git cat-file -p huge-nested | sed -n 's/^object //p')")" = tag ] ||
	fail "set-up: huge-nested is not a tag of a tag"
read -r mb st < <(peak "$RESULTS" gc --dry-run)
[ "$mb" -lt "$LIMIT" ] || fail "gc read the 1 GB blob a tag of a tag names: peak RSS $mb MB"
[ "$st" = 0 ] || fail "gc with a tag of a tag of a 1 GB blob exited $st: $(cat "$T/err")"
pass "a tag of a tag of a 1 GB blob: gc does not read it (peak RSS $mb MB)"
git tag -d huge-nested >/dev/null

bigfile pins.txt $((300 * 1000 * 1000))
read -r mb st < <(peak "$RESULTS" pin "$id")
[ "$mb" -lt "$LIMIT" ] || fail "pin read the 300 MB pins.txt: peak RSS $mb MB"
[ "$st" = 7 ] || fail "pin with a 300 MB pins.txt exited $st: $(cat "$T/err")"
grep -q "pins.txt' is too large" "$T/err" || fail "the message does not name pins.txt: $(cat "$T/err")"
read -r mb st < <(peak "$RESULTS" gc --dry-run)
[ "$mb" -lt "$LIMIT" ] || fail "gc read the 300 MB pins.txt: peak RSS $mb MB"
[ "$st" = 7 ] || fail "gc with a 300 MB pins.txt exited $st: $(cat "$T/err")"
grep -q "pins.txt' is too large" "$T/err" || fail "gc does not name pins.txt: $(cat "$T/err")"
pass "a 300 MB pins.txt: pin and gc refuse it before it is read (exit 7, peak RSS $mb MB)"
git reset -q --hard HEAD~1

bigfile .results.json $((300 * 1000 * 1000))
for cmd in "gc --dry-run" "check" "list --limit 1"; do
	# shellcheck disable=SC2086
	read -r mb st < <(peak "$RESULTS" $cmd)
	[ "$mb" -lt "$LIMIT" ] || fail "$cmd read the 300 MB .results.json: peak RSS $mb MB"
	! grep -q "out of memory" "$T/err" || fail "$cmd: $(cat "$T/err")"
done
grep -q ".results.json' is too large" "$T/err" || "$RESULTS" gc --dry-run 2>&1 | grep -q ".results.json' is too large" ||
	fail "no command names the oversized .results.json"
pass "a 300 MB .results.json: gc, check and list stay under $LIMIT MB (peak RSS $mb MB)"
git reset -q --hard HEAD~1

summary=$(git ls-tree -r --name-only HEAD "$run" | grep summary.md)
bigfile "$summary" $((300 * 1000 * 1000))
for cmd in "show $id" "site $T/site"; do
	# shellcheck disable=SC2086
	read -r mb st < <(peak "$RESULTS" $cmd)
	[ "$mb" -lt 120 ] || fail "$cmd read the 300 MB summary.md: peak RSS $mb MB ($(cat "$T/err"))"
done
pass "a 300 MB summary.md: show and site stay bounded (peak RSS $mb MB)"
