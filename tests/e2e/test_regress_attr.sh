#!/usr/bin/env bash
# End-to-end test of issue 10 on a generated series shaped like the real
# report (a pandas-heavy simulation, recorded with `results add`):
#   c0, c1  the same code (c1 twice: a noise band)
#   c2      a new function, ~11% of the run, whose time is almost all in
#           the library calls it makes (own time ~1% of it)
# and checks that `check` and `compare` name that function by its total
# time, the project's own code first, not the root wrappers.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_regress_attr

pass() { echo "ok - $*"; }
has() { grep -q -- "$1" "$T/out" || { cat "$T/out" >&2; fail "output lacks '$1' ($2)"; }; }
hasnt() { ! grep -q -- "$1" "$T/out" || { cat "$T/out" >&2; fail "output has '$1' ($2)"; }; }
# the line after the one matching $1
line_after() { sed -n "/$1/{n;p;q}" "$T/out"; }

git init -q "$T/repo"
cd "$T/repo"
git config results.remote "file://$T/store"
printf '*.pyisession filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes
git add .gitattributes && git commit -qm "results repository"

C0=c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0
C1=c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1
C2=c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2
NEWFN=trace_contacts

CLOCK=1796097200
# record <sha> <months> <population> <gen-session options...>
record() {
	local sha=$1 months=$2 pop=$3; shift 3
	CLOCK=$((CLOCK + 3600))
	gen --population "$pop" --months "$months" "$@" -o "$T/s.pyisession"
	printf '{"months": %s, "population": %s}\n' "$months" "$pop" >"$T/stats.json"
	RUNNER_NAME=ci-1 RESULTS_RECORDED_AT=$CLOCK "$RESULTS" add "$T/s.pyisession" \
		--commit "$sha" --branch main --trigger nightly --stats "$T/stats.json" >/dev/null
}

record $C0 6 100 --seed 11 --noise 1
record $C1 6 100 --seed 1 --noise 1
record $C1 6 100 --seed 1 --run 2 --noise 1

# --- a new function with 1% own time and ~11% total -----------------------
record $C2 6 100 --seed 5 --noise 1 --new-lib-function "$NEWFN:0.14"
expect_status 1 "$RESULTS" check
has "REGRESSION" "the step is flagged"
first=$(line_after "^functions responsible")
case "$first" in
"  $NEWFN (healthsystem.py:"*"): total time - -> "*", new function, own code") ;;
*) cat "$T/out" >&2; fail "first function responsible is not $NEWFN by total time: '$first'" ;;
esac
pass "check names the new function by its total time, as own code"

expect_status 1 "$RESULTS" check --format json
python3 - "$T/out" "$NEWFN" <<'PY' || fail "check json"
import json, sys
r = json.load(open(sys.argv[1]))
f = r["responsible"][0]
assert f["function"] == sys.argv[2] and f["change"] == "new" and f["own_code"], f
assert f["head_self"] < 0.05 * f["head_total"], f          # own time says nothing
assert 0.07 < f["head_total_share"] < 0.16, f
PY
expect_status 1 "$RESULTS" check --format markdown
has "^- \`$NEWFN\` healthsystem.py:[0-9]*: total time - → " "markdown names it first"
pass "json and markdown agree"

# --- compare: the explanation, and no root wrappers on top ----------------
expect_status 0 "$RESULTS" compare $C1 $C2
first=$(line_after "^where the added time went")
case "$first" in
"  $NEWFN (healthsystem.py:"*) ;;
*) cat "$T/out" >&2; fail "compare does not lead with $NEWFN: '$first'" ;;
esac
top=$(sed -n '/^Largest changes in total time/{n;n;p;q}' "$T/out")
case "$top" in
"  "MainThread*|"  <module>"*|"  main "*|"  run "*|"")
	cat "$T/out" >&2; fail "the first total-time row is a root wrapper: '$top'" ;;
esac
has "left out: [0-9]* root frames" "root frames are counted, not listed"
sed -n '/^New functions/,/^$/p' "$T/out" | grep -q "^  $NEWFN (healthsystem.py:[0-9]*) *- .*%  *[0-9.]* [ms]*s$" \
	|| { cat "$T/out" >&2; fail "the new function's row lacks its total time"; }
pass "compare explains the added time and shows total time"

# --- the project says which code is its own ---------------------------------
printf '{"remote": "file://%s/store", "own_code": ["popsimulation/core.py", "no_such_module"]}\n' "$T" >.results.json
git add .results.json && git commit -qm "own code: the core only"
expect_status 1 "$RESULTS" check --format json
python3 - "$T/out" "$NEWFN" <<'PY' || fail "check json with own_code"
import json, sys
r = json.load(open(sys.argv[1]))
fs = r["responsible"]
# healthsystem.py is not own code now; the core's frames are all roots
# (run loop), so the new function still leads, as library code
assert fs[0]["function"] == sys.argv[2] and not fs[0]["own_code"], fs
# and not the scheduler above it, whose growth is the new function's
assert "HealthSystemScheduler.apply" not in [f["function"] for f in fs], fs
PY
pass "own_code in .results.json decides what is own code"
echo "all attribution tests passed"
