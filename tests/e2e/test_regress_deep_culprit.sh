#!/usr/bin/env bash
# Issue 19 section 1, from the sessions: `compare --deep` names the
# culprits by the calling-context rule of check (analysis/culprit.c),
# reading the sessions' whole call trees rather than the stored summaries.
# The case the summaries cannot tell: the real session
# tests/data/real_small_pop1k.pyisession edited so that a new method,
# screen_contacts (called from do_incidence), fans its time out over
# twelve new small helpers, each calling the shared LinearModel.predict
# (copies of predict's real subtrees), 4% of the run in all. Each helper
# holds about 0.3% of the run: below the stored tree's 0.5% cut, so the
# stored summaries cannot see that predict's added time lies under the
# new call, and blame predict as "slower wherever it is called" as well.
# From the sessions only the new call is blamed, with its call path; and
# the top call paths start where the paths divide, not at the root frames.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_regress_deep_culprit

python3 - "$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession" "$T" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src))
json.dump(d, open(out + "/base.pyisession", "w"))
recs = d["frame_records"]
total = sum(t for _, t in recs)
name = lambda f: f.split("\x00")[0]
# the stack down to do_incidence, from its first record
site = next(st for st, _ in recs if any(name(f) == "do_incidence" for f in st))
site = site[:[name(f) for f in site].index("do_incidence") + 1]
hivfile = site[-1].split("\x00")[1]
new = "screen_contacts\x00%s\x00400\x01cHivPollingEvent\x01l402" % hivfile
helpers = ["screen_group_%02d\x00%s\x00%d\x01cHivPollingEvent\x01l%d" % (i, hivfile, 410 + 4 * i, 411 + 4 * i)
           for i in range(12)]
# predict's real subtrees (its outermost frame and below), copied under the helpers in turn
tails = []
for st, t in recs:
    names = [name(f) for f in st]
    if "predict" in names:
        tails.append((st[names.index("predict"):], t))
added, k = 0.0, 0
while added < 0.04 * total:
    tail, t = tails[k % len(tails)]
    recs.append([site + [new, helpers[k % 12]] + tail, t])
    added += t
    k += 1
for key in ("duration", "cpu_time"):
    if isinstance(d.get(key), (int, float)):
        d[key] += added
d["sample_count"] = len(recs)
json.dump(d, open(out + "/head.pyisession", "w"))
print("added %.3f s in %d records (%.1f%% of the run)" % (added, k, added / total * 100))
PY

results_repo "$T/repo"
A=a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1
B=b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2
RESULTS_RECORDED_AT=1796097200 "$RESULTS" add "$T/base.pyisession" --commit $A --branch main --trigger nightly >/dev/null
RESULTS_RECORDED_AT=1796100800 "$RESULTS" add "$T/head.pyisession" --commit $B --branch main --trigger nightly >/dev/null

# culprits: "case|function|caller|path" per line, from compare's JSON ($1: extra options)
culprits() {
	"$RESULTS" compare a1a1 b2b2 "$@" --format json >"$T/cmp.json"
	python3 - "$T/cmp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d.get("summary", d)
for c in s.get("culprits") or []:
    print("%s|%s|%s|%s" % (c.get("case"), c.get("function"), c.get("caller") or "", c.get("path") or ""))
PY
}

culprits >"$T/stored.txt"
culprits --deep >"$T/deep.txt"
echo "stored summaries:"; sed 's/^/  /' "$T/stored.txt"
echo "sessions:"; sed 's/^/  /' "$T/deep.txt"
first=$(head -1 "$T/deep.txt")
case "$first" in
"new call|screen_contacts|HivPollingEvent.do_incidence|"*"do_incidence > screen_contacts") ;;
*) fail "compare --deep: the first culprit is not the new call do_incidence -> screen_contacts: $first" ;;
esac
! grep -q '|predict|\|LinearModel.predict' "$T/deep.txt" ||
	fail "compare --deep blames the shared helper predict, whose added time is all under the new call"
[ "$(wc -l <"$T/deep.txt")" -eq 1 ] || fail "compare --deep names more culprits than the new call: $(cat "$T/deep.txt")"
echo "ok - compare --deep blames the new call from the sessions' call trees, not the shared helper it calls"

# the text report: the case, the call path, where the culprits come from
"$RESULTS" compare a1a1 b2b2 --deep >"$T/deep.out"
grep -q "^culprits (where the added time appears, by calling context, from the sessions' whole call trees):" "$T/deep.out" ||
	fail "compare --deep does not say its culprits come from the sessions"
grep -q "^  new call HivPollingEvent.do_incidence -> screen_contacts (" "$T/deep.out" || fail "no new-call line: $(grep -A3 '^culprits' "$T/deep.out")"
grep -q "^      call path: … > .*do_incidence > screen_contacts$" "$T/deep.out" || fail "no call path for the culprit"
echo "ok - the text report shows the culprit's case and call path"

# the top call paths: where the paths divide, not the root frames every stack shares
python3 - "$T/deep.out" <<'PY' || fail "the top call paths start at the root frames"
import sys
text = open(sys.argv[1]).read()
part = text.split("Call paths whose total time changed most", 1)[1]
rows = [l.strip() for l in part.splitlines()[1:] if l.startswith("  ") and not l.startswith("     ")]
assert rows, part[:500]
first = rows[0]
assert "screen_contacts" in first and not first.endswith(("MainThread (<thread>)", "<module> (run_profile.py)", "main (run_profile.py)")), rows[:3]
roots = [r for r in rows if r.split(" > ")[-1].split(" (")[0] in ("MainThread", "<module>", "main", "run", "simulate", "fire_single_event")]
assert not roots, roots
print("ok - the top call path is the new call:", first)
PY
