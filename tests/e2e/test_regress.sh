#!/usr/bin/env bash
# End-to-end test of the regression tools (issue 5) on a generated series
# that mimics successive commits, recorded with `results add`:
#   c0  the model as it is
#   c1  the same code, three runs (different seeds, 2% timing noise)
#   c2  a pure rename of one function
#   c3  a new function taking ~10% of the time
#   c4  the c3 code simulating twice the months (more work, same speed;
#       6 and 12 months, so the model's start-up cost is small per month)
#   c5  the c4 code, slower, but on another runner
# and checks that:
#   - check stays quiet on the noise re-runs and on the rename, flags c3
#     (exit 1) naming the new function, passes c4 and reports its
#     per-month duration unchanged, and refuses to compare c5 with runs
#     of another runner;
#   - compare reports the rename as a rename (text and json);
#   - find locates the step at c3;
#   - trend --json has the series and the change point.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_regress

has() { grep -q -- "$1" "$T/out" || { cat "$T/out" >&2; fail "output lacks '$1' ($2)"; }; }
hasnt() { ! grep -q -- "$1" "$T/out" || { cat "$T/out" >&2; fail "output has '$1' ($2)"; }; }

results_repo "$T/repo"

C0=c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0
C1=c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1
C2=c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2
C3=c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3
C4=c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4
C5=c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5
NEWFN=validate_population
# The function to rename: the busiest one with a source file and no
# class, as the generator's model lists them (the model may change).
gen --list-functions >"$T/functions"
OLDFN=$(awk 'NR > 1 && $3 !~ /^</ && $2 !~ /\./ { print $2; exit }' "$T/functions")
[ -n "$OLDFN" ] || fail "gen-session --list-functions gave no function to rename"
RENAMED=${OLDFN}_renamed
SLOWFN=$(awk -v old="$OLDFN" 'NR > 1 && $2 !~ /\./ && $2 != old { print $2; exit }' "$T/functions")

CLOCK=1796097200
# record <sha> <months> <runner> <gen-session options...>
record() {
	local sha=$1 months=$2 runner=$3; shift 3
	gen --population 100 --months "$months" "$@" -o "$T/s.pyisession"
	printf '{"months": %s, "population": 100, "mem": {"peak_mb": 812}}\n' "$months" >"$T/stats.json"
	record_session "$runner" "$sha" --stats "$T/stats.json"
}

# --- c0, c1: the same code, c1 run three times, with noise ------------
record $C0 6 ci-1 --seed 11 --noise 2
expect_status 0 "$RESULTS" check
has "nothing to check" "the first run has no baseline"
record $C1 6 ci-1 --seed 1 --noise 2
expect_status 0 "$RESULTS" check
has "no regression" "same code, another commit"
record $C1 6 ci-1 --seed 2 --noise 2
expect_status 0 "$RESULTS" check
has "no regression" "first re-run"
record $C1 6 ci-1 --seed 3 --noise 2
expect_status 0 "$RESULTS" check --format json
python3 - "$T/out" "$C0" <<'PY' || fail "check json of a noise re-run"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["regressed"] is False, r
assert r["noise_runs"] == 3, r["noise_runs"]
# the baseline is the previous commit, not the head's own earlier runs
assert r["baseline_commit"] == sys.argv[2] and len(r["baseline"]) == 1, r["baseline"]
m = {x["name"]: x for x in r["metrics"]}
# 6 months on both sides: time compared as is, one row per fact
assert m["duration"]["gating"] and "duration/months" not in m, m
assert r["same_workload"] == "months = 6" and r["workload"] is None, r
assert m["duration"]["band"] > 0, m
PY
pass "check is quiet on re-runs of the same code; the band comes from the re-runs"

# --- c2: a pure rename ---------------------------------------------------
record $C2 6 ci-1 --seed 4 --noise 2 --rename "$OLDFN:$RENAMED"
expect_status 0 "$RESULTS" check
has "no regression" "rename"
pass "check is quiet on a pure rename"
expect_status 0 "$RESULTS" compare $C1 $C2
has "Renamed functions" "compare text"
has "$OLDFN -> [A-Za-z_.]*$RENAMED (" "compare text names both"
# (other functions may be new: with every function that ran recorded, one
# that only this run's simulated events called is new, truthfully)
sed -n '/^New functions/,/^$/p;/^Vanished functions/,/^$/p' "$T/out" >"$T/newvan"
! grep -q -- "$OLDFN\|$RENAMED" "$T/newvan" || { cat "$T/out" >&2; fail "a rename is not a new function"; }
expect_status 0 "$RESULTS" compare $C1 $C2 --format json
python3 - "$T/out" "$OLDFN" "$RENAMED" <<'PY' || fail "compare json of a rename"
import json, sys
d = json.load(open(sys.argv[1]))
fs = d["functions"]
ren = [f for f in fs if f["change"] == "renamed"]
assert len(ren) == 1, ren
bare = lambda name: name.split(".")[-1]   # "Class.fn" when a class is known
assert bare(ren[0]["old_function"]) == sys.argv[2] and bare(ren[0]["function"]) == sys.argv[3], ren
assert not [f for f in fs if f["change"] in ("new", "vanished") and
            bare(f["function"]) in (sys.argv[2], sys.argv[3])], fs
names = {m["name"] for m in d["metrics"]}
assert names >= {"duration", "cpu_time", "samples", "months"}, names
assert "duration/months" not in names, names   # the same months: no per-unit rows
PY
pass "compare reports the rename as a rename"

# --- c3: a new function taking ~10% --------------------------------------
record $C3 6 ci-1 --seed 5 --noise 2 --rename "$OLDFN:$RENAMED" --new-function "$NEWFN:0.10"
expect_status 1 "$RESULTS" check
has "REGRESSION" "slowdown flagged"
has "functions responsible" "names functions"
sed -n '/functions responsible/,$p' "$T/out" | sed -n 2p | grep -q "$NEWFN" \
	|| { cat "$T/out" >&2; fail "the first function responsible is not $NEWFN"; }
expect_status 1 "$RESULTS" check --format markdown
has "## ❌ Performance check" "markdown heading"
has "| metric | baseline | head |" "markdown table"
has "\`$NEWFN\`" "markdown names the function"
has "<details>" "markdown folds the full comparison"
expect_status 0 "$RESULTS" check --threshold 60
pass "check flags the new function (exit 1) and names it; a higher threshold passes"
expect_status 0 "$RESULTS" compare $C2 $C3 --format markdown
has "New functions" "compare lists the new function"
has "\`$NEWFN\`" "compare names it"

# --- c4: more simulated work, same code ---------------------------------
record $C4 12 ci-1 --seed 6 --noise 2 --rename "$OLDFN:$RENAMED" --new-function "$NEWFN:0.10"
# c4 keeps c3's slowdown, which was never accepted: against the default
# window (median at c1's level) it is still slower; the extra work is
# judged against c3, the same code
expect_status 1 "$RESULTS" check
expect_status 0 "$RESULTS" check --baseline $C3 --format json
python3 - "$T/out" <<'PY' || fail "check json of the extra-work commit"
import json, sys
r = json.load(open(sys.argv[1]))
m = {x["name"]: x for x in r["metrics"]}
assert r["regressed"] is False, r
assert r["workload"] == "months", r["workload"]
assert m["duration"]["rel"] > 0.6, m["duration"]         # twice the months ...
# ... same speed: within the noise the repeated runs of c1 showed (the
# model's start-up cost, spread over twice the months, also lowers it a bit)
pm = m["duration/months"]
assert abs(pm["rel"]) < max(0.08, 1.5 * pm["band"]), pm
assert not m["duration/months"]["regressed"]
assert not m["duration"]["gating"]
PY
expect_status 1 "$RESULTS" check --baseline $C3 --no-workload
pass "extra work: per-month duration unchanged, check passes (and flags it without normalising)"

# --- c5: another runner --------------------------------------------------
record $C5 12 other-runner --seed 7 --noise 2 --rename "$OLDFN:$RENAMED" --new-function "$NEWFN:0.10" --slow "$SLOWFN:4"
expect_status 0 "$RESULTS" check
has "nothing to check" "another runner has no baseline"
expect_status 2 "$RESULTS" check --baseline $C4
grep -q "another machine" "$T/err" || fail "explicit baseline from another runner: $(cat "$T/err")"
pass "runs from another runner are not compared"

# --- find ------------------------------------------------------------------
expect_status 0 "$RESULTS" find $C1..$C4
has "largest step in duration/months" "normalised metric"
has "first after: .*commit $C3" "the step is at c3"
has "last before: .*commit $C2" "the commit before it"
expect_status 0 "$RESULTS" find $C1..$C4 --format json
python3 - "$T/out" "$C3" <<'PY' || fail "find json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["first_after"]["commit"] == sys.argv[2], r
assert r["runs"] == 6, r      # all three runs of c1, then c2, c3, c4
assert r["rel"] > 0.02, r
PY
pass "find locates the slowdown at c3"

# --- trend -------------------------------------------------------------------
expect_status 0 "$RESULTS" trend --json --branch main --function "$NEWFN"
python3 - "$T/out" "$NEWFN" <<'PY' || fail "trend json"
import json, sys
t = json.load(open(sys.argv[1]))
assert len(t["runs"]) == 8, len(t["runs"])
names = [s["name"] for s in t["metrics"]]
assert "duration" in names and "duration/months" in names, names
f = t["functions"]
assert len(f) == 1 and f[0]["function"] == sys.argv[2], f
v = f[0]["values"]
assert v[:5] == [0] * 5 and all(x > 0 for x in v[5:]), v
PY
expect_status 0 "$RESULTS" trend --metric mem.peak_mb --metric samples
has "mem.peak_mb" "any stat can be trended"
pass "trend gives metric and function series"

# --- errors ------------------------------------------------------------------
expect_status 2 "$RESULTS" check deadbeef
expect_status 2 "$RESULTS" check --window 3 --baseline $C1
expect_status 4 "$RESULTS" compare $C1 deadbeef
expect_status 2 "$RESULTS" compare $C1
expect_status 2 "$RESULTS" find $C1
expect_status 0 "$RESULTS" check --help
has "exit status" "help"
(cd "$T" && mkdir -p plain && cd plain && git init -q . && \
	expect_status 2 "$RESULTS" check && expect_status 3 "$RESULTS" compare a b)
pass "errors: check exits 2, the others their documented statuses"
echo "all regression tests passed"
