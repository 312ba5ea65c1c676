#!/usr/bin/env bash
# Index shards are bounded (issue 21, docs/run-format.md "The index"): a
# `results add` writes objects of the same number and size whatever its
# month already holds -- 10 runs or 522, in the layout of either writer --
# and a repository written by the one-shard-a-month layout (a bundle made
# by results before shards were bounded) is read and extended.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_index_shards
H=$RS_SOURCE_DIR/bench/scale_history.sh
export RS_BIN_DIR
gen --seed 7 --samples 80 -o "$T/s.pyisession"

# new_objects REV: "COUNT BYTES" of the objects commit REV adds
new_objects() {
	git rev-list --objects "$1" --not "$1^" | cut -d' ' -f1 |
		git cat-file --batch-check='%(objectsize)' | awk '{ n++; s += $1 } END { print n, s }'
}

# add_into NAME RUNS LAYOUT: a history of RUNS runs whose last month holds
# RUNS-1 of them (LAYOUT), one more run added to that month by results add;
# prints the COUNT BYTES of the add's commit. The run goes to a shard of
# at most 128 lines, and every run is still listed.
add_into() {
	local last
	LAYOUT=$3 LAST_MONTH_RUNS=$(($2 - 1)) PER_DAY=50 "$H" "$2" "$T/$1" >/dev/null 2>"$T/$1.err" ||
		{ cat "$T/$1.err" >&2; fail "scale_history.sh $2 $1"; }
	(
		cd "$T/$1/clone"
		last=$(git log -1 --format=%ct)
		RESULTS_RECORDED_AT=$((last + 60)) expect_status 0 "$RESULTS" add "$T/s.pyisession" \
			--commit "$(printf 'c%.0s' {1..40})" --trigger nightly --branch main
		for f in $(git diff-tree -r --name-only HEAD^ HEAD -- index); do
			[ "$(git show "HEAD:$f" | wc -l)" -le 128 ] ||
				fail "$1: the add rewrote $f of $(git show "HEAD:$f" | wc -l) lines"
		done
		expect_status 0 "$RESULTS" list --limit 0 --json
		[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/out")" = $(($2 + 1)) ] ||
			fail "$1: list does not show the $(($2 + 1)) runs"
		new_objects HEAD
	)
}

read -r n10 b10 < <(add_into small 11 bounded)
read -r n522 b522 < <(add_into big 523 bounded)
read -r nold bold < <(add_into old 523 month)
echo "add into a month of 10 runs: $n10 objects, $b10 bytes; of 522: $n522, $b522; of 522 (one shard): $nold, $bold"
for c in "$n522 $b522 bounded" "$nold $bold month"; do
	set -- $c
	# one more object at most (the month's folder of further shards, a few
	# hundred bytes); the run folder's day holds ~19 runs instead of 10
	[ "$1" -le $((n10 + 1)) ] || fail "add into a busy month ($3 layout) writes $1 objects, $n10 into a quiet one"
	[ "$2" -le $((b10 + 4096)) ] ||
		fail "add into a busy month ($3 layout) writes $2 bytes, $b10 into a quiet one"
done
pass "results add writes the same objects into a month of 10 runs or 522, either layout"

# A repository results wrote before shards were bounded (tests/data/README.md):
# 3 runs in 2020-12, 140 in one index/2021-01.jsonl.
git clone -q "$RS_SOURCE_DIR/tests/data/index_month_layout.bundle" "$T/legacy" 2>/dev/null
cd "$T/legacy"
results_repo_setup >/dev/null 2>&1 || true
[ "$(git show HEAD:index/2021-01.jsonl | wc -l)" = 140 ] || fail "the bundle is not what tests/data/README.md says"
expect_status 0 "$RESULTS" list --limit 0 --json
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/out")" = 143 ] ||
	fail "list does not show the 143 runs of the old layout"
oldest=$(git show HEAD:index/2020-12.jsonl | sed -n 1p | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
expect_status 0 "$RESULTS" show "$oldest"
expect_status 0 "$RESULTS" check
RESULTS_RECORDED_AT=1610236800 expect_status 0 "$RESULTS" add "$T/s.pyisession" \
	--commit "$(printf 'd%.0s' {1..40})" --trigger nightly --branch main
RESULTS_RECORDED_AT=1612137600 expect_status 0 "$RESULTS" add "$T/s.pyisession" \
	--commit "$(printf 'e%.0s' {1..40})" --trigger nightly --branch main
[ "$(git diff-tree -r --name-only HEAD~2 HEAD -- index ':!index/branches' ':!index/commits' | sort | tr '\n' ' ')" = "index/2021-01/0002.jsonl index/2021-02.jsonl " ] ||
	fail "the adds wrote $(git diff-tree -r --name-only HEAD~2 HEAD -- index | tr '\n' ' '), not a second shard of 2021-01 and a first of 2021-02"
# the first add built the branch map (src/runs/branchmap.h) from every shard: main's
# runs are in 2021-02.jsonl (1), 2021-01/0002.jsonl (1) and 2021-01.jsonl (140)
git show HEAD~1:index/branches/covered.json | grep -q '"20210110-000000-nightly-ddddddd"' ||
	fail "the first add wrote no branch map: $(git ls-tree -r --name-only HEAD~1 index)"
git show HEAD:index/branches/covered.json | grep -q '"20210201-000000-nightly-eeeeeee"' ||
	fail "the second add did not move covered.json on"
git grep -h '"branch":"main"' HEAD -- index/branches | grep -qF '"shards":[["2021-02",1,1],["2021-01",2,1],["2021-01",1,140]]' ||
	fail "main's line of the map: $(git grep -h '"branch":"main"' HEAD -- index/branches)"
# and the commit map (index/commits/, keyed on the commit's first three digits)
git show HEAD~1:index/commits/covered.json | grep -q '"20210110-000000-nightly-ddddddd"' ||
	fail "the first add wrote no commit map: $(git ls-tree -r --name-only HEAD~1 index)"
[ "$(git show HEAD:index/commits/d/d/d.jsonl)" = '{"commit":"'"$(printf 'd%.0s' {1..40})"'","shards":[["2021-01",2,1]]}' ] ||
	fail "ddd...'s line of the commit map: $(git show HEAD:index/commits/d/d/d.jsonl)"
[ "$(git show HEAD:index/commits/e/e/e.jsonl)" = '{"commit":"'"$(printf 'e%.0s' {1..40})"'","shards":[["2021-02",1,1]]}' ] ||
	fail "eee...'s line of the commit map: $(git show HEAD:index/commits/e/e/e.jsonl)"
expect_status 0 "$RESULTS" list --limit 3
head -4 "$T/out" | tail -3 | awk '{ print $1 }' | tr '\n' ' ' >"$T/ids"
grep -q "^20210201-000000-nightly-eeeeeee 20210110-000000-nightly-ddddddd 20210103-220000-nightly-" "$T/ids" ||
	fail "list shows $(cat "$T/ids"), not the two new runs then the old layout's newest"
expect_status 0 "$RESULTS" list --limit 0 --json
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/out")" = 145 ] ||
	fail "list does not show the 145 runs of both layouts"
git status --short | grep -q . && fail "the work tree is not clean: $(git status --short)"
pass "a repository of the one-shard-a-month layout is read and extended with bounded shards"
