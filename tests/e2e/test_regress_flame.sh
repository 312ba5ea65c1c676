#!/usr/bin/env bash
# The differential flame graph of `results compare --deep --html` (issue
# 10) on two generated runs -- the second with a new function whose time
# is in the pandas calls it makes -- rendered in headless Chromium
# (Debian's chromium from its command line, tests/browser/check_html.py
# flame, no Node.js): laid out, the new function one red frame of its
# share's width, a screenshot with the red subtree and grey callers, no
# network; then interactive (check_html.py zoom): a click zooms into a
# frame (its subtree fills the graph), the zoom path and Escape go back,
# arrow keys and Enter, '/' and the search with its count and share, the
# accessible names, screenshots of the search before and after a zoom.
# The same on the site's diff page and on its run page's own graph.
# Needs: chromium and python3 (scripts/install-deps.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_regress_flame

need_chromium

results_repo "$T/repo"
CLOCK=1796097200
record() {
	local sha=$1; shift
	gen --population 100 --months 3 "$@" -o "$T/s.pyisession"
	record_session ci-1 "$sha"
}
record aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa --seed 1
record bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb --seed 1 --run 2 --new-lib-function trace_contacts:0.14
"$RESULTS" compare aaaa bbbb --deep --html "$T/flame.html" >/dev/null
[ -s "$T/flame.html" ] || fail "compare --deep --html wrote nothing"
python3 "$BROWSER_DIR/check_html.py" flame "$T/flame.html" "$T/shots" trace_contacts || fail "flame graph in Chromium"
echo "ok - the differential flame graph renders in headless Chromium"
# interactive: click, the zoom path, Escape, keys, search; screenshots of the zoom
python3 "$BROWSER_DIR/check_html.py" zoom "$T/flame.html" "$T/shots" trace_contacts || fail "flame graph zoom and search"
# a substring of several frames' names, in another case: every one found, the time counted once
python3 "$BROWSER_DIR/check_html.py" zoom "$T/flame.html" "$T/shots" trace_contacts PREDICT || fail "flame graph search"
echo "ok - the differential flame graph zooms by click and keyboard and searches"

# the static site: one per run, from the stored call trees, linked from the run page
"$RESULTS" site "$T/site" 2>/dev/null
HEAD_ID=$("$RESULTS" list --json | python3 -c 'import json,sys; print([r["id"] for r in json.load(sys.stdin) if r["commit"].startswith("bbbb")][0])')
[ -s "$T/site/runs/$HEAD_ID.diff.html" ] || fail "site: no runs/$HEAD_ID.diff.html"
grep -q "<a href=\"$HEAD_ID.diff.html\">Differential flame graph</a>" "$T/site/runs/$HEAD_ID.html" \
	|| fail "site: the run page does not link its flame graph"
! ls "$T/site/runs/" | grep -q "aaaaaaa.diff.html" || fail "site: the first run has no run before it"
python3 "$BROWSER_DIR/check_html.py" flame "$T/site/runs/$HEAD_ID.diff.html" "$T/shots-site" trace_contacts \
	|| fail "site flame graph in Chromium"
python3 "$BROWSER_DIR/check_html.py" zoom "$T/site/runs/$HEAD_ID.diff.html" "$T/shots-site" trace_contacts \
	|| fail "site flame graph zoom and search"
echo "ok - the site has a differential flame graph per run, rendered in headless Chromium, interactive"

# the run page's own flame graph, from the stored call tree
python3 "$BROWSER_DIR/check_html.py" zoom "$T/site/runs/$HEAD_ID.html" "$T/shots-site" trace_contacts \
	|| fail "site run page flame graph zoom and search"
echo "ok - the site's run page has an interactive flame graph of its run"
