#!/usr/bin/env bash
# Issue 19 section 1: `check` names the culprit from where the added time
# appears in the call tree, on generated sessions of a pandas-heavy model:
#   A  a new method calling the shared helper LinearModel.predict
#      (used by every module): the new call is the culprit, not predict;
#   B  LinearModel.predict itself slower (it now copies its input through
#      pandas): slower wherever it is called, predict is the culprit;
#   C  a model function called from one place slower through the pandas
#      calls it makes: that function is the culprit.
# The verdict says which case; the text reports show the call path; and
# the answer does not change with the project's own_code setting.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_regress_culprit

results_repo "$T/repo"
C0=c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0
CLOCK=1796097200
# record <sha> <gen-session options...>: 6 months, population 100
record() {
	local sha=$1
	shift
	gen --population 100 --months 6 --seed 3 --noise 1 "$@" -o "$T/s.pyisession"
	printf '{"months": 6, "population": 100}\n' >"$T/stats.json"
	record_session ci-1 "$sha" --stats "$T/stats.json"
}
# check_json <sha>: `results check` of the newest run against c0, as JSON in $T/out
check_json() { expect_status 1 "$RESULTS" check --baseline $C0 --format json; }
# first_culprit: "case|function|caller|callers|path" of the first culprit in $T/out
first_culprit() {
	python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["culprits"][0]
print("|".join(str(c[k]) for k in ("case", "function", "caller", "callers", "path")))' "$T/out"
}

record $C0
cp "$T/s.pyisession" "$T/base.pyisession"
record $C0 --run 2

# --- A: a new caller of the shared helper --------------------------------
record a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 --run 3 --new-caller trace_contacts:0.13
expect_status 1 "$RESULTS" check --baseline $C0
grep -q '^verdict: +[0-9]*% vs c0c0c0c: new call HealthSystemScheduler.apply -> trace_contacts ([0-9.]* s)$' "$T/out" ||
	{ cat "$T/out" >&2; fail "the verdict does not name the new call first"; }
sed -n '/^culprits/,/^$/p' "$T/out" >"$T/culprits"
grep -q '^      call path: … > .*HealthSystemScheduler.apply > trace_contacts$' "$T/culprits" ||
	{ cat "$T/out" >&2; fail "the new call's call path is not shown"; }
! grep -q 'predict' "$T/culprits" || { cat "$T/out" >&2; fail "the helper the new caller calls is blamed too"; }
check_json
IFS='|' read -r kind fn caller _ path <<<"$(first_culprit)"
[ "$kind" = "new call" ] && [ "$fn" = trace_contacts ] && [ "$caller" = HealthSystemScheduler.apply ] ||
	{ cat "$T/out" >&2; fail "first culprit is '$kind' '$fn' (caller '$caller'), not the new call of trace_contacts"; }
python3 - "$T/out" <<'PY' || fail "the new call's figures"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["culprits"][0]
assert 0.09 < c["growth_share"] < 0.17, c          # about 13% of the run lies under it
assert r["responsible"][0]["function"] == "trace_contacts", r["responsible"][0]
PY
expect_status 1 "$RESULTS" check --baseline $C0 --format markdown
grep -q '^- new call `HealthSystemScheduler.apply -> trace_contacts` (' "$T/out" &&
	grep -q '^  call path: `… > .*HealthSystemScheduler.apply > trace_contacts`$' "$T/out" ||
	{ cat "$T/out" >&2; fail "markdown lacks the culprit and its call path"; }
# compare --deep: the call paths start where the paths part, not at the
# frames every stack shares (MainThread, <module>, main, run, simulate)
expect_status 0 "$RESULTS" compare $C0 a1a1a1a --deep
first=$(sed -n '/^Call paths whose total time changed most/{n;p;q}' "$T/out")
case "$first" in
"  … > "*"apply (healthsystem.py) > trace_contacts (healthsystem.py)") ;;
*) cat "$T/out" >&2; fail "compare --deep's first call path is not the new call: '$first'" ;;
esac
grep -q "^  (left out: [0-9]* call paths whose change is that of one call below them" "$T/out" ||
	{ cat "$T/out" >&2; fail "compare --deep does not count the paths it leaves out"; }
pass "a new caller of a shared helper is the culprit, with its call path; the helper is not"

# --- B: the shared helper slower wherever it is called --------------------
record b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1 --run 3 --slow-lib LinearModel.predict:0.3
expect_status 1 "$RESULTS" check --baseline $C0
grep -q '^verdict: +[0-9]*% vs c0c0c0c: slower wherever it is called, [0-9]* callers: LinearModel.predict (+[0-9.]* m\?s)$' "$T/out" ||
	{ cat "$T/out" >&2; fail "the verdict does not name the helper slower everywhere"; }
check_json
IFS='|' read -r kind fn _ callers path <<<"$(first_culprit)"
[ "$kind" = "slower wherever it is called" ] && [ "$fn" = LinearModel.predict ] && [ "$callers" -ge 5 ] ||
	{ cat "$T/out" >&2; fail "first culprit is '$kind' '$fn' ($callers callers), not predict slower everywhere"; }
case "$path" in *" > LinearModel.predict") ;; *) fail "predict's call path: '$path'" ;; esac
pass "a shared helper slower in every context is the culprit, with its callers counted"

# --- C: a model function slower in its own body through pandas calls ------
# a function of a disease module (not the shared services), called from
# one place, 2-6% of the run: chosen from the base session itself
FN=$(python3 - "$T/base.pyisession" <<'PY'
import collections, json, sys
recs = json.load(open(sys.argv[1]))["frame_records"]
tot, callers, cls, T = collections.Counter(), collections.defaultdict(set), {}, 0
for frames, t in recs:
    T += t
    keys = []
    for f in frames:
        p = f.split("\x00")
        k = (p[0], p[1])
        keys.append(k)
        if "\x01c" in p[2]:
            cls[k] = p[2].split("\x01c")[1].split("\x01")[0]
    for k in set(keys):
        tot[k] += t
    for a, b in zip(keys, keys[1:]):
        callers[b].add(a)
shared = ("/lm.py", "/core.py", "/healthsystem.py", "/symptommanager.py", "/demography.py",
          "/healthseekingbehaviour.py", "/enhanced_lifestyle.py")
c = [k for k in tot if "/methods/" in k[1] and not k[1].endswith(shared) and k in cls
     and k[0] != "apply" and len(callers[k]) == 1 and 0.02 * T < tot[k] < 0.06 * T]
c.sort(key=lambda k: (-tot[k], k))
print(cls[c[0]] + "." + c[0][0])
PY
)
[ -n "$FN" ] || fail "no model function to slow down"
record c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1 --run 3 --slow-lib "$FN:4"
check_json
IFS='|' read -r kind fn _ _ path <<<"$(first_culprit)"
[ "$kind" = "slower in its own body" ] && [ "$fn" = "$FN" ] ||
	{ cat "$T/out" >&2; fail "first culprit is '$kind' '$fn', not $FN slower in its own body"; }
case "$path" in *" > $FN") ;; *) fail "$FN's call path: '$path'" ;; esac
expect_status 1 "$RESULTS" check --baseline $C0
grep -q "^verdict: +[0-9]*% vs c0c0c0c: slower in its own body: $FN (+[0-9.]* m\?s)$" "$T/out" ||
	{ cat "$T/out" >&2; fail "the verdict does not name $FN slower in its own body"; }
pass "a function slower through the library calls it makes is the culprit itself"

# --- the same answers whatever the project calls its own code -------------
for own in '["popsimulation/methods/"]' '["lm.py", "core.py"]' '["scripts"]'; do
	printf '{"remote": "file://%s/store", "own_code": %s}\n' "$T" "$own" >.results.json
	git add .results.json && git commit -qm "own code: $own"
	for sha in a1a1a1a b1b1b1b c1c1c1c; do
		expect_status 1 "$RESULTS" check $sha --baseline $C0 --format json
		got=$(first_culprit | cut -d'|' -f1,2)
		case $sha in
		a1a1a1a) want="new call|trace_contacts" ;;
		b1b1b1b) want="slower wherever it is called|LinearModel.predict" ;;
		c1c1c1c) want="slower in its own body|$FN" ;;
		esac
		[ "$got" = "$want" ] || { cat "$T/out" >&2; fail "with own_code $own, $sha's culprit is '$got', not '$want'"; }
	done
done
pass "the culprits do not depend on the own_code setting"

# --- the same on a real session's frames ------------------------------------
# tests/data/real_small_pop1k.pyisession edited (tests/gen/edit_session.py)
# into a new caller of the project's most shared helper, and into that
# helper slower wherever it is called; each against the real session.
results_repo "$T/real"
REAL=$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession
EDIT=$RS_SOURCE_DIR/tests/gen/edit_session.py
R0=e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0
cp "$REAL" "$T/s.pyisession"
record_session ci-1 $R0
# the stored calls table, checked against the session's records: time per
# caller -> callee pair, each sample once per pair, the first 40 levels
"$RESULTS" show $R0 --json >"$T/run.json"
python3 - "$T/run.json" "$REAL" <<'PY' || fail "the calls table does not match the session"
import collections, json, sys
s = json.load(open(sys.argv[1]))["summary"]
rows = [(f["function"], f["file"], f["line"]) for f in s["functions"]]
files = s["more_functions"]["files"]
rows += [(r[0], files[r[1]], r[2]) for r in s["more_functions"]["rows"]]
calls = s["calls"]
assert calls["version"] == 1 and calls["rows"], calls
got = {(rows[a], rows[b]): (t, o) for a, b, t, o in calls["rows"]}
want, own = collections.Counter(), collections.Counter()
for frames, t in json.load(open(sys.argv[2]))["frame_records"]:
    ks = []
    for f in frames[:40]:
        p = f.split("\x00")
        line = 0 if p[1] == "<thread>" else int(p[2].split("\x01")[0])
        ks.append((p[0], p[1], line))
    for e in set(zip(ks, ks[1:])):
        want[e] += t
    if len(frames) <= 40 and len(ks) >= 2:
        own[(ks[-2], ks[-1])] += t
norm = lambda k: (k[0], k[1], 0 if k[1] == "<thread>" else k[2])
got = {(norm(a), norm(b)): v for (a, b), v in got.items()}
floor = calls["floor"] * s["sampled_time"]
for e, (t, o) in got.items():
    assert abs(t / 1e6 - want[e]) < 2e-6, (e, t, want[e])
    assert abs(o / 1e6 - own[e]) < 2e-6, (e, o, own[e])
for e, t in want.items():
    assert t < floor or e in got, (e, t, floor)
PY
IFS=$'\t' read -r helper caller < <(python3 "$EDIT" "$REAL" "$T/s.pyisession" new-caller trace_contacts 0.13)
record_session ci-1 e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1
expect_status 1 "$RESULTS" check --baseline $R0 --format json
IFS='|' read -r kind fn via _ path <<<"$(first_culprit)"
[ "$kind" = "new call" ] && [ "$fn" = trace_contacts ] && [ "${via##*.}" = "$caller" ] ||
	{ cat "$T/out" >&2; fail "real frames: first culprit is '$kind' '$fn' (caller '$via'), not the new call $caller -> trace_contacts"; }
python3 - "$T/out" "$helper" <<'PY' || fail "real frames: the helper is blamed for its new caller"
import json, sys
r = json.load(open(sys.argv[1]))
assert not [c for c in r["culprits"] if c["function"].split(".")[-1] == sys.argv[2]], r["culprits"]
PY
python3 "$EDIT" "$REAL" "$T/s.pyisession" slower 1.5 >/dev/null
record_session ci-1 e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2
expect_status 1 "$RESULTS" check --baseline $R0 --format json
IFS='|' read -r kind fn _ callers path <<<"$(first_culprit)"
[ "$kind" = "slower wherever it is called" ] && [ "${fn##*.}" = "$helper" ] && [ "$callers" -ge 4 ] ||
	{ cat "$T/out" >&2; fail "real frames: first culprit is '$kind' '$fn' ($callers callers), not $helper slower everywhere"; }
case "$path" in *" > $fn") ;; *) fail "real frames: $fn's call path: '$path'" ;; esac
pass "real frames: a new caller is the culprit, and a helper slower everywhere is"

# --- against real run-to-run noise --------------------------------------------
# Two real runs of the same code (tests/data/real_rerun_{a,b}_pop10k): b
# edited into a new caller and into a helper slower everywhere, each
# checked against a: the noise between the runs must not change the answer.
results_repo "$T/noise"
zstd -q -d --long=27 "$RS_SOURCE_DIR/tests/data/real_rerun_a_pop10k.pyisession.zst" -o "$T/a.pyisession"
zstd -q -d --long=27 "$RS_SOURCE_DIR/tests/data/real_rerun_b_pop10k.pyisession.zst" -o "$T/b.pyisession"
cp "$T/a.pyisession" "$T/s.pyisession"
record_session ci-1 f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0
cp "$T/b.pyisession" "$T/s.pyisession"
record_session ci-1 f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1
expect_status 0 "$RESULTS" check f1f1f1f --baseline f0f0f0f
grep -q '^verdict: [-+][0-9]*% vs f0f0f0f: no regression$' "$T/out" || { cat "$T/out" >&2; fail "a rerun is a regression"; }
IFS=$'\t' read -r helper caller < <(python3 "$EDIT" "$T/b.pyisession" "$T/s.pyisession" new-caller trace_contacts 0.13)
record_session ci-1 f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2
expect_status 1 "$RESULTS" check f2f2f2f --baseline f0f0f0f --format json
python3 - "$T/out" "$helper" "$caller" <<'PY' || fail "real noise: the new call is not the only culprit"
import json, sys
cs = json.load(open(sys.argv[1]))["culprits"]
assert cs and cs[0]["case"] == "new call" and cs[0]["function"] == "trace_contacts", cs
assert cs[0]["caller"].split(".")[-1] == sys.argv[3], cs[0]
assert len(cs) == 1, cs     # neither the helper nor the frames above the new call
PY
python3 "$EDIT" "$T/b.pyisession" "$T/s.pyisession" slower 1.0 >/dev/null
record_session ci-1 f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3
expect_status 1 "$RESULTS" check f3f3f3f --baseline f0f0f0f --format json
IFS='|' read -r kind fn _ callers _ <<<"$(first_culprit)"
[ "$kind" = "slower wherever it is called" ] && [ "${fn##*.}" = "$helper" ] && [ "$callers" -ge 10 ] ||
	{ cat "$T/out" >&2; fail "real noise: first culprit is '$kind' '$fn' ($callers callers), not $helper slower everywhere"; }
pass "against real run-to-run noise: a rerun passes, the new call and the helper slower everywhere are named"
