#!/usr/bin/env bash
# Phases from the profile (issue 22): the inclusive time under each phase
# named in .results.json (or, without a configuration, under each
# top-level frame below the script's entry point) becomes a phase.<name>
# metric of the run, with a timeline of each phase's share; check,
# compare and trend use it like duration, so that a slower phase is named
# even when a faster one hides it in the total. On a real session whose
# sample times are reshaped (its frames and stacks untouched).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_phases

REAL=$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession
RESHAPE=$RS_SOURCE_DIR/tests/tools/reshape_session.py
A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
B=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
# the population is built 3x slower, the simulation 10% faster: the total
# moves about 2%, under the 5% threshold
python3 "$RESHAPE" "$REAL" "$T/slow_init.pyisession" make_initial_population=3 simulate=0.9
# a small phase twice as slow: +34 ms, 1.4% of the run: noise-sized, not a finding
python3 "$RESHAPE" "$REAL" "$T/slow_small.pyisession" build_simulation=2
command -v jq >/dev/null || fail "jq is needed"

# --- the default: top-level frames under the entry point ---------------------------------
results_repo "$T/repo"
"$RESULTS" add "$REAL" --commit "$A" >/dev/null
rj=$(ls runs/*/*/*/*/run.json)
jq -e '.phases.source == "default" and .phases.under == "run"' "$rj" >/dev/null ||
	fail "default phases not found under run(): $(jq -c '.phases | del(.timeline)' "$rj")"
jq -e '.phases.names == ["Simulation.simulate", "Simulation.make_initial_population", "build_simulation"]' "$rj" >/dev/null ||
	fail "default phases: $(jq -c .phases.names "$rj")"
# their times add up to the sampled time (the split node has no own time here)
jq -e '([.phases.totals[]] | add) + .phases.other - .phases.sampled | fabs < 1e-5' "$rj" >/dev/null ||
	fail "phase totals do not add up: $(jq -c '.phases | del(.timeline)' "$rj")"
jq -e '.metrics["phase.Simulation.simulate"] > 2.0 and .metrics["phase.Simulation.simulate"] < 2.4' "$rj" >/dev/null ||
	fail "phase metric: $(jq -c .metrics "$rj")"
# the timeline: slices in time order, each row's phases within the slice
jq -e '.phases.timeline.rows | length >= 20 and length <= 240' "$rj" >/dev/null || fail "timeline length"
jq -e '[.phases.timeline.rows[] | .[1:] | add] | add - 2.400361 | fabs < 1e-3' "$rj" >/dev/null ||
	fail "the timeline does not hold the run's time"
# the population is built before the simulation starts: its share is early
jq -e '.phases.timeline.rows[0][2] > 0 and (.phases.timeline.rows[-1][2] == 0)' "$rj" >/dev/null ||
	fail "make_initial_population is not at the start of the timeline: $(jq -c '.phases.timeline.rows[0,-1]' "$rj")"
pass "default phases: simulate, make_initial_population, build_simulation under run(), with a timeline"

# --- configured phases; a slower phase hidden in the total -------------------------------
results_repo "$T/repo2"
cat >.results.json <<'JSON'
{"phases": {"initialise": "Simulation.make_initial_population",
            "simulate": "Simulation.simulate",
            "logs": "parse_log_file"}}
JSON
git add .results.json && git commit -qm phases
"$RESULTS" add "$REAL" --commit "$A" >/dev/null
"$RESULTS" add "$T/slow_init.pyisession" --commit "$B" >/dev/null
rj=$(ls -t runs/*/*/*/*/run.json | head -1)
jq -e '.phases.source == "config" and .phases.names == ["initialise", "simulate", "logs"]' "$rj" >/dev/null ||
	fail "configured phases: $(jq -c '.phases | del(.timeline)' "$rj")"
jq -e '.metrics["phase.logs"] == 0 and .metrics["phase.initialise"] > 0.35' "$rj" >/dev/null ||
	fail "configured phase metrics: $(jq -c .metrics "$rj")"
st=0
"$RESULTS" check --format json >"$T/check.json" 2>"$T/err" || st=$?
[ "$st" = 1 ] || fail "check of a 3x slower phase exited $st: $(cat "$T/check.json" "$T/err")"
jq -e '[.metrics[] | select(.name == "phase.initialise" and .regressed)] | length == 1' "$T/check.json" >/dev/null ||
	fail "check does not flag phase.initialise: $(jq -c '.metrics' "$T/check.json")"
jq -e '[.metrics[] | select(.name == "duration" and (.regressed | not))] | length == 1' "$T/check.json" >/dev/null ||
	fail "the total should not be the regression here: $(jq -c '.metrics' "$T/check.json")"
"$RESULTS" check >"$T/check.txt" || true
grep -q "phase.initialise" "$T/check.txt" || fail "the text report does not name the phase"
pass "check: a 3x slower phase flagged by name though the total moved ~2%"

C=cccccccccccccccccccccccccccccccccccccccc
"$RESULTS" add "$T/slow_small.pyisession" --commit "$C" >/dev/null
"$RESULTS" check --baseline "$A" --format json >"$T/check2.json" || fail "a small phase's small change failed the check: $(jq -c .metrics "$T/check2.json")"
pass "check: a small phase twice as slow (1.4% of the run) is not called a regression"

expect_status 0 "$RESULTS" compare "$A" "$B"
grep -q "phase.initialise" "$T/out" || fail "compare shows no phase rows"
expect_status 0 "$RESULTS" trend --metric phase.initialise --format json
jq -e '[.. | numbers] | length >= 2' "$T/out" >/dev/null || fail "trend of a phase: $(cat "$T/out")"
pass "compare and trend show phase metrics"

# --- a bad configuration is refused, naming it --------------------------------------------
printf '{"phases": {"init": ""}}\n' >.results.json
git commit -qam "bad phases"
expect_status 2 "$RESULTS" add "$REAL" --commit "$A"
grep -q "phase 'init' needs a frame" "$T/err" || fail "bad phase spec: $(cat "$T/err")"
printf '{"phases": ["x"]}\n' >.results.json
git commit -qam "bad phases 2"
expect_status 2 "$RESULTS" add "$REAL" --commit "$A"
grep -q '"phases" must be an object' "$T/err" || fail "phases not an object: $(cat "$T/err")"
pass "a malformed phases setting is refused with its name, nothing recorded"
