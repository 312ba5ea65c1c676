#!/usr/bin/env bash
# End-to-end test of the gate on generated series of a noisy CI runner
# (issue 19, §2 and §3; the real-session twin is test_regress_noise.sh).
# The same code and simulated events (--seed 3) on successive commits:
#   c1 c2 c3 c3  reruns with a runner's noise (--run N --noise 0.5
#                --wall-noise 3: wall time a few % above CPU time, CPU
#                within 1%)                      -> no regression
#   c4           a heavily loaded runner (--load 2.1) -> the machine, exit 0
#   c5           a lightly loaded one (--load 1.15)   -> the machine, exit 0
#   c6           one pandas function's own time x1.7 (+4% of the run):
#                under the threshold, beyond its own noise -> a warning,
#                a failure with --fail-on-functions
#   c7           4x the population                -> no baseline
#   c8           recorded without stats           -> no baseline
#   c9           a rerun with stats               -> c7 and c8 left out
# and trend and find leave c7 and c8 out.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_regress_runner

has() { grep -q -- "$1" "$T/out" || { cat "$T/out" >&2; fail "output lacks '$1' ($2)"; }; }
hasnt() { ! grep -q -- "$1" "$T/out" || { cat "$T/out" >&2; fail "output has '$1' ($2)"; }; }

results_repo "$T/repo"
CLOCK=1796097200
sha() { runner_sha "$1"; }
# record N POPULATION|- GEN-OPTIONS...: commit cN on runner ci-1; "-": no stats
record() { record_runner "$@"; }
quiet() { # quiet WHAT: check exits 0 without a regression
	expect_status 0 "$RESULTS" check
	hasnt "REGRESS" "$1"
}

# --- reruns with a runner's noise --------------------------------------------
record 1 100 --population 100 --run 1
record 2 100 --population 100 --run 2
quiet "a rerun"
record 3 100 --population 100 --run 3
quiet "a rerun"
record 3 100 --population 100 --run 4
quiet "a rerun of the same commit"
has "no regression" "said"
pass "reruns with realistic noise: no regression"

# --- loaded runners, heavily and lightly ---------------------------------
record 4 100 --population 100 --run 5 --load 2.1
quiet "a heavily loaded runner"
has "verdict: .*the machine was slower (wall +1[0-9][0-9]%, CPU +[0-9]%, all functions x2" "the machine named"
has "judged on CPU time" "CPU time decides"
record 5 100 --population 100 --run 6 --load 1.15
quiet "a lightly loaded runner"
has "verdict: .*the machine was slower (wall +1[0-9]%" "the machine named"
pass "a loaded runner, heavily or lightly: 'the machine was slower', exit 0"

# --- a function beyond its own noise, the run within its own ---------------
record 6 100 --population 100 --run 7 --slow _pack_handle:1.7
quiet "a function-level change under the run's threshold"
has "no regression; a function beyond its noise: _pack_handle" "a warning naming it"
has "functions beyond their own noise" "listed"
expect_status 1 "$RESULTS" check --fail-on-functions
has "REGRESSION" "a failure when configured"
pass "a function beyond its noise: a warning, a failure with --fail-on-functions"

# --- like with like ------------------------------------------------------
record 7 400 --population 400 --run 8
quiet "another population"
has "no comparable baseline: the 7 earlier runs on this machine ran another configuration (population 400 here, 100 in those runs)" \
	"4x the population is never compared"
record 8 - --population 100 --run 9
quiet "a run without stats"
has "(no stats here, months 3 in those runs)" "a run without stats is an unknown configuration"
record 9 100 --population 100 --run 10
quiet "a rerun after the odd runs"
has "2 runs of another configuration left out (months 3 here, no stats in those runs)" "left out, the right way round"
expect_status 0 "$RESULTS" trend --json
python3 - "$T/out" <<'PY' || fail "trend json"
import json, sys
t = json.load(open(sys.argv[1]))
d = next(s for s in t["metrics"] if s["name"] == "duration")["values"]
assert d[7] is None and d[8] is None, d          # c7 (4x) and c8 (no stats)
assert all(v is not None for v in d[:7] + d[9:]), d
assert t["excluded_runs"] == 2, t["excluded_runs"]
PY
expect_status 0 "$RESULTS" find "$(sha 1)..$(sha 9)" --format json
python3 - "$T/out" "$(sha 7)" "$(sha 8)" <<'PY' || fail "find json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["excluded_runs"] == 2, r
assert r["first_after"]["commit"] not in sys.argv[2:], r
PY
pass "a 4x-population run and a run without stats are never compared; trend and find leave them out"
echo "all runner-noise tests passed"
