#!/usr/bin/env bash
# End-to-end test of `results open` (issue 10): a recorded run's session,
# fetched on demand in a clone that has no session content, written as a
# self-contained interactive HTML call tree and checked in headless
# Chromium (tests/browser/check_html.py open, no Node.js): the tree and
# its top frames, children by total time, a click unfolds a line, no
# network; with --speedscope the speedscope file, checked against its
# schema and the session; -o, no overwrite without --force.
# Needs: chromium and python3 (scripts/install-deps.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_open

need_chromium

gen --seed 3 --population 100 --months 1 --new-lib-function trace_contacts:0.14 -o "$T/s.pyisession"
git init -q --bare "$T/results.git"
git clone -q "$T/results.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$T/store" >/dev/null
SHA=0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a
RESULTS_RECORDED_AT=1796097200 "$RESULTS" add "$T/s.pyisession" --commit $SHA --branch main \
	--trigger nightly >/dev/null
git push -q origin HEAD:main 2>"$T/push.err" || { cat "$T/push.err"; fail "git push"; }
ID=$("$RESULTS" list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')

# a developer clone: no session content, open fetches it
git clone -q "$T/results.git" "$T/dev" 2>/dev/null
cd "$T/dev"
"$RESULTS" init >/dev/null
[ -z "$(find .git/lfs/objects -type f 2>/dev/null)" ] || fail "the clone already holds the session"
expect_status 0 "$RESULTS" open 0a0a
[ "$(cat "$T/out")" = "wrote $ID.html: open it in a browser" ] || fail "open said: $(cat "$T/out")"
[ -s "$ID.html" ] || fail "no $ID.html in the current folder"
[ -n "$(find .git/lfs/objects -type f)" ] || fail "the session was not fetched into the clone"
# self-contained: no reference to anything outside the page
! grep -Eq '(src|href)="(https?:)?//' "$ID.html" || fail "the page loads something from elsewhere"
python3 "$BROWSER_DIR/check_html.py" open "$PWD/$ID.html" "$T/shots" MainThread '<module>' simulate trace_contacts ||
	fail "the call tree in Chromium"
python3 "$BROWSER_DIR/check_html.py" zoom "$PWD/$ID.html" "$T/shots" trace_contacts ||
	fail "the flame graph's zoom, keys and search in Chromium"
pass "open writes the run's call tree and flame graph, fetched on demand, interactive in Chromium"

# own and total times: the new function's own time is tiny, its total is not
python3 - "$ID.html" <<'PY' || fail "the tree's figures"
import re, sys
page = open(sys.argv[1]).read()
rows = re.findall(r'data-t="([0-9.]+)"[^>]*>(?:<summary>)?<span class="t"[^>]*>([^<]*)</span>'
                  r'<span class="o"[^>]*>([^<]*)</span><span class="p">([0-9.]+)%</span><span class="n">([^<]*)</span>', page)
assert rows, page[:2000]
top = float(rows[0][0])
assert rows[0][4] == 'MainThread' and abs(float(rows[0][3]) - 100.0) < 0.2, rows[0]
tc = [r for r in rows if r[4] == 'trace_contacts']
assert len(tc) == 1, tc
share = float(tc[0][0]) / top
assert 0.08 < share < 0.2, share          # ~11% of the run in total
own = tc[0][2]
assert own.endswith('ms') or own.endswith('us') or own == '0 s', own   # own time small
PY
pass "each frame shows its total and own time and its share"

# no overwrite without --force; -o; --force
before=$(sha256sum "$ID.html")
expect_status 2 "$RESULTS" open 0a0a
grep -q "results: '$ID.html' exists; give --force to overwrite it, or -o another file" "$T/err" ||
	fail "open over an existing file: $(cat "$T/err")"
[ "$(sha256sum "$ID.html")" = "$before" ] || fail "the existing file was changed"
echo old >"$T/mine.html"
expect_status 0 "$RESULTS" open "$ID" -o "$T/mine.html" --force
grep -q '^<!doctype html>' "$T/mine.html" || fail "--force did not overwrite"
expect_status 0 "$RESULTS" open "$T/s.pyisession" -o "$T/file.html"
grep -q 'trace_contacts' "$T/file.html" || fail "open of a session file"
pass "open refuses to overwrite without --force; -o and a session file"

# --speedscope: the file and a one-line hint
expect_status 0 "$RESULTS" open 0a0a --speedscope
[ "$(cat "$T/out")" = "open https://www.speedscope.app and load $ID.speedscope.json" ] ||
	fail "--speedscope said: $(cat "$T/out")"
python3 - "$ID.speedscope.json" "$T/s.pyisession" "$ID" <<'PY' || fail "speedscope file"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["$schema"] == "https://www.speedscope.app/file-format-schema.json", s.get("$schema")
assert s["name"] == sys.argv[3] and s["activeProfileIndex"] == 0
frames = s["shared"]["frames"]
assert frames and all(isinstance(f["name"], str) for f in frames)
assert any(f["name"].startswith("trace_contacts ") for f in frames)
p = s["profiles"][0]
assert p["type"] == "sampled" and p["unit"] == "seconds" and p["startValue"] == 0
assert len(p["samples"]) == len(p["weights"]) > 0
assert all(0 <= i < len(frames) for smp in p["samples"] for i in smp)
sess = json.load(open(sys.argv[2]))
total = sum(t for st, t in sess["frame_records"] if st)
assert abs(sum(p["weights"]) - total) < 1e-6 * total and abs(p["endValue"] - total) < 1e-6 * total
PY
expect_status 2 "$RESULTS" open 0a0a --speedscope
grep -q "exists; give --force" "$T/err" || fail "--speedscope over an existing file: $(cat "$T/err")"
pass "open --speedscope writes the speedscope file and says how to look at it"

expect_status 4 "$RESULTS" open deadbeef
expect_status 2 "$RESULTS" open
expect_status 2 "$RESULTS" open 0a0a --bogus
pass "usage errors"
