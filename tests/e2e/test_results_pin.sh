#!/usr/bin/env bash
# `results pin` end to end: pins.txt as committed after each pin and
# unpin, what is printed, and that a run already as asked changes nothing
# (pinning a pinned run once dropped it from pins.txt while saying
# "already pinned", so that gc would have deleted its sessions).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_results_pin

pass() { echo "ok - $*"; }

git init -q --bare "$T/origin.git"
git clone -q "$T/origin.git" "$T/ci" 2>/dev/null
cd "$T/ci"
git config results.remote "file://$T/store"
git config lfs.standalonetransferagent results
git config lfs.customtransfer.results.path "$AGENT"
printf '*.pyisession filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes
git add .gitattributes && git commit -qm "results repository"
S=$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_5.1.2.pyisession
RESULTS_RECORDED_AT=1796097200 "$RESULTS" add "$S" --commit 1234aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \
	--branch main >/dev/null
RESULTS_RECORDED_AT=1796097300 "$RESULTS" add "$S" --commit 5678bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb \
	--branch main >/dev/null
A=20261201-035320-manual-1234aaa
B=20261201-035500-manual-5678bbb
HEADER="# Runs whose raw sessions 'results gc' keeps: 'results pin <run>'"

expect_status 0 "$RESULTS" pin "$A"
[ "$(cat "$T/out")" = "pinned $A
committed pins.txt: 'git push' to share it" ] || fail "pin: $(cat "$T/out")"
[ "$(git show HEAD:pins.txt)" = "$HEADER
$A" ] || fail "pins.txt after pin: $(git show HEAD:pins.txt)"
[ "$(git log -1 --format=%s)" = "results: pin $A" ] || fail "commit message: $(git log -1 --format=%s)"
pass "pin commits pins.txt naming the run"

head=$(git rev-parse HEAD)
expect_status 0 "$RESULTS" pin "$A"
[ "$(cat "$T/out")" = "already pinned: $A" ] || fail "pin again: $(cat "$T/out")"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "pinning a pinned run made a commit"
git show HEAD:pins.txt | grep -qx "$A" || fail "pinning a pinned run dropped it from pins.txt"
pass "pinning a pinned run keeps it and commits nothing"

expect_status 0 "$RESULTS" pin 5678 "$A"
[ "$(cat "$T/out")" = "pinned $B
already pinned: $A
committed pins.txt: 'git push' to share it" ] || fail "pin two: $(cat "$T/out")"
[ "$(git show HEAD:pins.txt)" = "$HEADER
$A
$B" ] || fail "pins.txt after pin of two: $(git show HEAD:pins.txt)"
[ "$(git log -1 --format=%s)" = "results: pin $B $A" ] || fail "commit message: $(git log -1 --format=%s)"
pass "a run named by its commit is pinned beside one already pinned"

expect_status 0 "$RESULTS" pin --unpin "$A"
[ "$(cat "$T/out")" = "unpinned $A
committed pins.txt: 'git push' to share it" ] || fail "unpin: $(cat "$T/out")"
[ "$(git show HEAD:pins.txt)" = "$HEADER
$B" ] || fail "pins.txt after unpin: $(git show HEAD:pins.txt)"
head=$(git rev-parse HEAD)
expect_status 0 "$RESULTS" pin --unpin "$A"
[ "$(cat "$T/out")" = "was not pinned: $A" ] || fail "unpin again: $(cat "$T/out")"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "unpinning an unpinned run made a commit"
pass "unpin removes the line; unpinning again commits nothing"

expect_status 4 "$RESULTS" pin "$B" nosuchrun
grep -q "no run 'nosuchrun'" "$T/err" || fail "unknown run: $(cat "$T/err")"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "a failed pin made a commit"
expect_status 2 "$RESULTS" pin
grep -q "name at least one run" "$T/err" || fail "no run: $(cat "$T/err")"
[ -z "$(git status --porcelain)" ] || fail "pin left the work tree dirty: $(git status --porcelain)"
pass "an unknown run is exit 4 and commits nothing; no run is exit 2"
# pins.txt edited on Windows or by hand: CRLF line ends, trailing blanks.
# gc read such a line as a pin while `pin --unpin` said "was not pinned"
# and `pin` added a second line: one parser now serves all three.
printf '%s\r\n%s \r\n%s\t\r\n' "$HEADER" "$A" "$B" >pins.txt
git commit -qam "pins edited by hand"
head=$(git rev-parse HEAD)
expect_status 0 "$RESULTS" pin "$A"
[ "$(cat "$T/out")" = "already pinned: $A" ] || fail "pin of a CRLF line: $(cat "$T/out")"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "pinning a run pinned on a CRLF line made a commit"
expect_status 0 "$RESULTS" pin --unpin "$A"
[ "$(head -1 "$T/out")" = "unpinned $A" ] || fail "unpin of a line with a trailing blank: $(cat "$T/out")"
[ "$(git show HEAD:pins.txt)" = "$(printf '%s\r\n%s\t\r' "$HEADER" "$B")" ] ||
	fail "pins.txt after unpinning a CRLF line: $(git show HEAD:pins.txt | od -c | head)"
expect_status 0 "$RESULTS" pin "$A" "$B"
[ "$(cat "$T/out")" = "pinned $A
already pinned: $B
committed pins.txt: 'git push' to share it" ] || fail "pin beside a CRLF line: $(cat "$T/out")"
[ "$(git show HEAD:pins.txt)" = "$(printf '%s\r\n%s\t\r\n%s\r' "$HEADER" "$B" "$A")" ] ||
	fail "pins.txt after pin in a CRLF file: $(git show HEAD:pins.txt | od -c | head)"
pass "pins.txt with CRLF and trailing blanks: one parser, no duplicate line"
echo "all results pin checks passed"
