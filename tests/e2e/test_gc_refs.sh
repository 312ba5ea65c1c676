#!/bin/bash
# Which refs gc and verify judge retention with (issue 18, items 1 and
# 11). A CI checkout (`git clone --depth 1`: one branch, shallow) once let
# gc delete the session of a run pinned on another branch ("... of 3 runs
# on 1 refs"); now the git remote's refs are listed and their tips
# fetched into refs/results/gc/. A git remote that cannot be asked, a tip
# missing with --no-fetch, a branch whose .results.json or run record does
# not parse: gc deletes nothing and says why, verify still verifies. A
# branch without a policy keeps everything, and the dry run says so.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_gc_refs

# The run pinned on release is a real pyinstrument session; the others generated.
cp "$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession" "$T/s1.pyisession"
for i in 2 3; do gen --seed $i --size 300K -o "$T/s$i.pyisession"; done
store_repo
set_retention '{"keep_last": 1}'
for i in 1 2 3; do
	RESULTS_RECORDED_AT=$((1700000000 + i * 100)) "$RESULTS" add "$T/s$i.pyisession" \
		--commit "$(printf '%040d' $i)" --trigger nightly --branch main >/dev/null
done
git push -q origin main >/dev/null 2>&1
mapfile -t ID < <(run_ids)
[ "${#ID[@]}" = 3 ] || fail "expected 3 runs, got ${#ID[@]}"
# The oldest run pinned on release only.
git checkout -q -b release
"$RESULTS" pin "${ID[0]}" >/dev/null
git push -q origin release >/dev/null 2>&1
git checkout -q main

# --- a shallow single-branch CI clone ---------------------------------------
shallow_clone() {
	rm -rf "$T/$1"
	git clone -q --depth 1 "file://$T/results.git" "$T/$1" 2>/dev/null
	cd "$T/$1"
	"$RESULTS" init >/dev/null
	[ -z "$(git for-each-ref --format='%(refname)' refs/remotes/origin/release)" ] ||
		fail "the clone is not single-branch: $(git for-each-ref refs/remotes)"
	[ -f .git/shallow ] || fail "the clone is not shallow"
}

# A git remote that cannot be asked: nothing deleted, and said why.
shallow_clone unreachable
git remote set-url origin "file://$T/nowhere.git"
gc_refuses 5 "cannot see the refs of the git remote 'origin'"
# verify still verifies this clone's runs, and warns.
expect_status 0 "$RESULTS" verify
grep -q "^results: warning: cannot see the refs of the git remote 'origin'" "$T/err" ||
	fail "verify does not warn: $(cat "$T/err")"
grep -q '^3 runs, 3 objects: 3 ok' "$T/out" || fail "verify with an unreachable git remote: $(cat "$T/out")"
pass "an unreachable git remote: gc deletes nothing and says why, verify verifies and warns"

# --no-fetch in a clone that lacks release's tip: nothing deleted.
shallow_clone nofetch
before=$(store_state)
expect_status 5 "$RESULTS" gc --no-fetch --grace 0 --force
grep -q "does not have the tip of 'refs/heads/release'" "$T/err" || fail "--no-fetch: $(cat "$T/err")"
grep -q "gc deletes nothing" "$T/err" || fail "--no-fetch: $(cat "$T/err")"
[ "$(store_state)" = "$before" ] || fail "gc --no-fetch changed the store while lacking a tip"
pass "--no-fetch without the other branch's tip deletes nothing"

shallow_clone shallow
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
grep -q "would remove raw session of run ${ID[1]}" "$T/out" || fail "dry run: $(cat "$T/out")"
! grep -q "${ID[0]}" "$T/out" || fail "the dry run would remove the run pinned on release: $(cat "$T/out")"
grep -q "^would remove 1 raw sessions of 1 runs .* of 3 runs on 2 refs (2 of the git remote 'origin', 0 of this clone only)" \
	"$T/out" || fail "dry-run totals: $(cat "$T/out")"
expect_status 0 "$RESULTS" gc --grace 0 --force
grep -q "^removed 1 raw sessions of 1 runs .* on 2 refs" "$T/out" || fail "gc: $(cat "$T/out")"
! grep -q "${ID[0]}" "$T/out" || fail "gc removed the run pinned on release: $(cat "$T/out")"
[ "$(git rev-parse refs/results/gc/heads/release)" = "$(git -C "$T/results.git" rev-parse release)" ] ||
	fail "release's tip is not in refs/results/gc/heads/release"
[ -f .git/shallow ] || fail "gc made the shallow clone deep"
expect_status 0 "$RESULTS" verify
grep -q "^ok  *run ${ID[0]}" "$T/out" || fail "the pinned run is not ok: $(cat "$T/out")"
grep -q "^removed  *run ${ID[1]}" "$T/out" || fail "run 2 is not removed: $(cat "$T/out")"
grep -q '^3 runs, 3 objects: 2 ok, 1 removed' "$T/out" || fail "verify after gc: $(cat "$T/out")"
expect_status 0 "$RESULTS" fetch -o "$T/o" "${ID[0]}"
cmp -s "$T/o/${ID[0]}/"*.pyisession "$T/s1.pyisession" || fail "the pinned run's session does not read back"
pass "a shallow single-branch clone keeps the session pinned on another branch"

# A branch deleted on the remote leaves refs/results/gc/ too; a tag of
# the remote keeps what its commit pins.
git -C "$T/results.git" tag v1 release
git -C "$T/results.git" branch -q -D release
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
! git rev-parse -q --verify refs/results/gc/heads/release >/dev/null || fail "a deleted branch stays in refs/results/gc/"
[ "$(git rev-parse refs/results/gc/tags/v1)" = "$(git -C "$T/results.git" rev-parse v1)" ] ||
	fail "the remote's tag is not in refs/results/gc/tags/v1"
! grep -q "${ID[0]}" "$T/out" || fail "the run pinned at tag v1 would go: $(cat "$T/out")"
git -C "$T/results.git" tag -d v1 >/dev/null
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
grep -q "would remove raw session of run ${ID[0]}" "$T/out" || fail "pinned nowhere, yet kept: $(cat "$T/out")"
git -C "$T/ci" push -q origin release 2>/dev/null
pass "refs/results/gc/ mirrors the remote's branches and tags"

# A single-branch clone that is not shallow stays a full clone.
rm -rf "$T/single"
git clone -q --single-branch "file://$T/results.git" "$T/single" 2>/dev/null
cd "$T/single"
"$RESULTS" init >/dev/null
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
! grep -q "${ID[0]}" "$T/out" || fail "a single-branch clone would remove the pinned run: $(cat "$T/out")"
[ ! -f .git/shallow ] || fail "gc made a full clone shallow"
git rev-parse -q --verify refs/results/gc/heads/release >/dev/null || fail "release was not fetched"
pass "a full single-branch clone fetches the other tips whole and stays full"

# --- item 11: a bad .results.json, a bad run record, a branch without policy --
# drop_branch NAME: branch NAME deleted here and on the git remote.
drop_branch() {
	git push -q origin --delete "$1" 2>/dev/null
	git branch -q -D "$1"
	git update-ref -d "refs/remotes/origin/$1" 2>/dev/null || true
}
cd "$T/ci"
git checkout -q -b broken release
printf '{"remote": ' >.results.json
git commit -qam "a broken marker file"
git push -q origin broken 2>/dev/null
git checkout -q main
git fetch -q origin
gc_refuses 7 "^results: branch 'broken' of the git remote 'origin': '.results.json' is not a JSON object"
grep -q "commit a fix on that branch, or delete the branch" "$T/err" || fail "no way out said: $(cat "$T/err")"
expect_status 0 "$RESULTS" verify
grep -q "^results: warning: branch 'broken' of the git remote 'origin': '.results.json'" "$T/err" ||
	fail "verify does not warn of the bad .results.json: $(cat "$T/err")"
grep -q '^3 runs, 3 objects: 2 ok, 1 removed' "$T/out" || fail "verify with a bad .results.json: $(cat "$T/out")"
pass "a bad .results.json on a branch: gc deletes nothing and says where, verify still verifies"

drop_branch broken
git checkout -q -b badrun release
p=$(git ls-tree -r --name-only HEAD index | grep -vE '^index/(branches|commits)/' | xargs -I{} git show "HEAD:{}" |
	python3 -c 'import sys,json; [print(d["path"] + "/run.json") for d in map(json.loads, filter(str.strip, sys.stdin)) if d["id"] == sys.argv[1]]' "${ID[2]}")
[ -f "$p" ] || fail "no run.json for ${ID[2]}: '$p'"
printf '{"files": [' >"$p"
git commit -qam "a broken run record"
git push -q origin badrun 2>/dev/null
git checkout -q main
gc_refuses 7 "^results: branch 'badrun' .*run ${ID[2]}: '$p' is not valid JSON"
expect_status 7 "$RESULTS" verify
grep -q '^3 runs, 3 objects: 2 ok, 1 removed' "$T/out" || fail "verify with a bad run.json: $(cat "$T/out")"
grep -q "run records or indexes could not be read" "$T/err" || fail "verify with a bad run.json: $(cat "$T/err")"
pass "a bad run.json on a branch: gc deletes nothing, verify verifies the rest and exits 7"
drop_branch badrun

git checkout -q -b nopolicy release
python3 - <<'PY'
import json
d = json.load(open('.results.json'))
del d['retention']
json.dump(d, open('.results.json', 'w'), indent=2)
PY
git commit -qam "no retention here"
git push -q origin nopolicy 2>/dev/null
git checkout -q main
expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
grep -q "^branch 'nopolicy' of the git remote 'origin' has no retention policy in .results.json: its 3 runs keep their raw sessions" \
	"$T/out" || fail "the dry run does not say the branch keeps everything: $(cat "$T/out")"
pass "a branch without a policy keeps everything, and the dry run says so"
echo "all gc refs checks passed"
