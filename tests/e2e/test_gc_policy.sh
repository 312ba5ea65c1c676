#!/bin/bash
# What the retention policy keeps (issue 18, items 5 and 6): keep_last per
# trigger, so that pull-request runs no longer evict nightly sessions (a
# number still counts every trigger of a branch, as before); a run whose
# recorded_at does not parse is of unknown age, which keep_days keeps
# (it once counted as 56 years old); a malformed index line stops gc,
# naming the file and line.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_gc_policy

store_repo
# nightly, pr, nightly, pr, nightly: a session each (the same bytes would be one object).
k=0
for trig in nightly pr nightly pr nightly; do
	k=$((k + 1))
	gen --seed $k --size 200K -o "$T/s$k.pyisession"
	RESULTS_RECORDED_AT=$((1700000000 + k * 100)) "$RESULTS" add "$T/s$k.pyisession" \
		--commit "$(printf '%040d' $k)" --trigger $trig --branch main >/dev/null
done
git push -q origin main >/dev/null 2>&1
mapfile -t ID < <(run_ids)
[ "${#ID[@]}" = 5 ] || fail "expected 5 runs, got ${#ID[@]}"
N1=${ID[0]} P1=${ID[1]} N2=${ID[2]} P2=${ID[3]} N3=${ID[4]}

# policy_drops JSON WANT...: with the policy JSON committed and pushed,
# gc --dry-run would remove exactly the runs WANT.
policy_drops() {
	set_retention "$1"
	git push -q origin main 2>/dev/null
	shift
	dry_run_drops "$@"
}
# dry_run_drops WANT...: gc --dry-run would remove exactly the runs WANT.
dry_run_drops() {
	expect_status 0 "$RESULTS" gc --dry-run --grace 0 --force
	for id in "${ID[@]}"; do
		local want=0
		for w in "$@"; do [ "$w" = "$id" ] && want=1; done
		if [ $want = 1 ]; then
			grep -q "would remove raw session of run $id" "$T/out" || fail "would keep $id: $(cat "$T/out")"
		else
			! grep -q "would remove raw session of run $id" "$T/out" || fail "would remove $id: $(cat "$T/out")"
		fi
	done
	grep -q "^would remove $# raw sessions" "$T/out" || fail "count: $(cat "$T/out")"
}

policy_drops '{"keep_last": 2}' "$N1" "$P1" "$N2"
pass "keep_last as a number counts every trigger of the branch, as it did"

policy_drops '{"keep_last": {"nightly": 2, "pr": 1}}' "$N1" "$P1"
pass "keep_last per trigger: a pull-request run no longer evicts a nightly session"

policy_drops '{"keep_last": {"pr": 1}}' "$P1"
policy_drops '{"keep_last": {"pr": 1, "*": 1}}' "$P1" "$N1" "$N2"
pass "triggers keep_last does not name keep their sessions, unless \"*\" counts them"

set_retention '{"keep_last": {"nightly": -1}}'
git push -q origin main 2>/dev/null
expect_status 7 "$RESULTS" gc --dry-run --grace 0 --force
grep -q "'retention.keep_last.<trigger>' in '.results.json' must be a count of runs" "$T/err" ||
	fail "a bad per-trigger count: $(cat "$T/err")"
grep -q "gc deletes nothing" "$T/err" || fail "a bad per-trigger count: $(cat "$T/err")"
pass "a bad per-trigger count is refused, naming the key"

# keep_days 30: every run is years old, but one whose recorded_at does not parse.
set_retention '{"keep_days": 30}'
shard=$(git ls-tree -r --name-only HEAD index | grep -vE '^index/(branches|commits)/')
python3 - "$shard" "$N2" <<'PY'
import json, sys
shard, rid = sys.argv[1], sys.argv[2]
out = []
for line in open(shard):
    d = json.loads(line)
    if d['id'] == rid:
        d['recorded_at'] = 'last tuesday'
    out.append(json.dumps(d))
open(shard, 'w').write('\n'.join(out) + '\n')
PY
git commit -qam "a run of unknown age"
git push -q origin main 2>/dev/null
dry_run_drops "$N1" "$P1" "$P2" "$N3"
grep -q "^run $N2: its recorded_at 'last tuesday' is not a UTC time .*: an unknown age, its raw session is kept" \
	"$T/out" || fail "the unknown age is not said: $(cat "$T/out")"
expect_status 0 "$RESULTS" list
grep -q "$N2" "$T/out" || fail "list does not list the run of unknown age: $(cat "$T/out")"
pass "an unknown age keeps the session, and says so; list lists the run"

# A malformed line: gc refuses, naming file and line; so does list.
printf '{"id": "not a run"\n' >>"$shard"
git commit -qam "a malformed index line"
git push -q origin main 2>/dev/null
gc_refuses 7 "branch 'main' of the git remote 'origin': $shard:6: "
expect_status 7 "$RESULTS" list
grep -q "$shard:6" "$T/err" || fail "list does not name the line: $(cat "$T/err")"
pass "a malformed index line: gc deletes nothing, gc and list name the file and line"
echo "all gc policy checks passed"
