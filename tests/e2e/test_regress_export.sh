#!/usr/bin/env bash
# End-to-end test of `results export` (issue 5): a recorded run's session
# converted to collapsed stacks and to speedscope JSON, checked against an
# independent python3 reading of the same session (record count, total
# time, the stacks' frames); a session file converted directly; a session
# missing from the local LFS store sends export through `results fetch`.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_regress_export

results_repo "$T/repo"
gen --seed 3 --population 100 --months 1 -o "$T/s.pyisession"
SHA=e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0
"$RESULTS" add "$T/s.pyisession" --commit $SHA --branch main >/dev/null

"$RESULTS" export $SHA --format collapsed -o "$T/c.txt"
"$RESULTS" export $SHA --format speedscope -o "$T/s.json"
"$RESULTS" export "$T/s.pyisession" --format collapsed >"$T/c2.txt"
cmp -s "$T/c.txt" "$T/c2.txt" || fail "exporting the run and the file differ"
python3 - "$T/s.pyisession" "$T/c.txt" "$T/s.json" <<'PY' || fail "export does not match the session"
import json, sys
sess = json.load(open(sys.argv[1]))
recs = [r for r in sess["frame_records"] if r[0]]
total = sum(r[1] for r in recs)
def fn(ident):                       # "function\0file\0line\1..." -> function
    return ident.split("\x00")[0]
# collapsed: one line per record, same stacks, weights in microseconds
lines = open(sys.argv[2]).read().splitlines()
assert len(lines) == len(recs), (len(lines), len(recs))
us = 0
for line, (stack, t) in zip(lines, recs):
    frames, w = line.rsplit(" ", 1)
    us += int(w)
    names = frames.split(";")
    assert len(names) == len(stack), line
    leaf = fn(stack[-1])
    assert names[-1].split(" (")[0].split(".")[-1] == leaf.split(".")[-1], (names[-1], leaf)
assert abs(us / 1e6 - total) < 1e-3 * total, (us, total)
# speedscope: a sampled profile whose weights add up to the session's time
s = json.load(open(sys.argv[3]))
p = s["profiles"][0]
assert p["type"] == "sampled" and p["unit"] == "seconds"
assert len(p["samples"]) == len(recs) == len(p["weights"])
assert abs(sum(p["weights"]) - total) < 1e-6 * total
assert abs(p["endValue"] - total) < 1e-6 * total
frames = s["shared"]["frames"]
assert all(0 <= i < len(frames) for smp in p["samples"] for i in smp)
leaf = frames[p["samples"][0][-1]]["name"]
assert leaf.split(" (")[0].split(".")[-1] == fn(recs[0][0][-1]).split(".")[-1], leaf
# thread ids change every run: not in frame names (issue 10)
assert lines[0].startswith("MainThread (<thread>);"), lines[0][:60]
assert any(f["name"] == "MainThread (<thread>)" and "line" not in f for f in frames), frames[:2]
PY
pass "collapsed and speedscope exports match the session (records, stacks, total time)"

# --- compare --deep: call paths from the two sessions ------------------------
gen --seed 4 --population 100 --months 1 --new-function deep_new_fn:0.15 -o "$T/n.pyisession"
SHA2=e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1
"$RESULTS" add "$T/n.pyisession" --commit $SHA2 --branch main >/dev/null
"$RESULTS" compare $SHA $SHA2 --deep >"$T/deep.txt"
grep -q "Call paths whose total time changed most" "$T/deep.txt" || fail "no call-path section: $(cat "$T/deep.txt")"
"$RESULTS" compare $SHA $SHA2 --deep --format json >"$T/deep.json"
python3 - "$T/deep.json" "$T/n.pyisession" <<'PY' || fail "compare --deep json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["functions"], "the summary diff is there too"
paths = d["deep"]["paths"]
new = [p for p in paths if p["path"].split(" > ")[-1].startswith("deep_new_fn ")]
assert new, [p["path"] for p in paths[:5]]
assert all(p["base_total"] == 0 and p["head_total"] > 0 for p in new), new
# independent: the time of the records whose leaf is the new function
sess = json.load(open(sys.argv[2]))
want = sum(t for st, t in sess["frame_records"] if st and st[-1].split("\x00")[0] == "deep_new_fn")
got = sum(p["head_self"] for p in new)
assert want > 0 and abs(got - want) <= 0.02 * want, (got, want)   # paths under 0.1% are left out
PY
pass "compare --deep reports the call paths of the new function, with its time"

# The session nowhere in this clone (neither in the local LFS store nor
# held for a push): export goes through fetch, which cannot find it on
# the (never pushed) store and says so.
rm -rf .git/lfs/objects .git/results/unpushed
code=0; "$RESULTS" export $SHA --format collapsed -o "$T/c3.txt" 2>"$T/err" || code=$?
[ "$code" -ge 5 ] && [ "$code" -le 8 ] || { cat "$T/err" >&2; fail "export of an absent session exited $code"; }
grep -q "^results: " "$T/err" || fail "no error message: $(cat "$T/err")"
[ ! -e "$T/c3.txt" ] || fail "a failed export left an output file"
pass "a session absent locally is fetched (and a failed fetch fails the export, exit $code)"

code=0; "$RESULTS" export $SHA --format pprof >/dev/null 2>&1 || code=$?
[ "$code" = 2 ] || fail "unknown format should exit 2, got $code"
code=0; "$RESULTS" export deadbeef --format collapsed >/dev/null 2>&1 || code=$?
[ "$code" = 4 ] || fail "unknown run should exit 4, got $code"
pass "usage errors"
echo "all export tests passed"
