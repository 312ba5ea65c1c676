#!/usr/bin/env bash
# End-to-end test of the HTML outputs (issue 5): `results trend --html`
# and `results site` on a generated series recorded with `results add`,
# checked as files (self-contained, links resolve) and rendered in
# headless Chromium (Debian's chromium, driven from its command line by
# tests/browser/check_html.py, no Node.js):
# charts laid out, a screenshot of a chart shows the line and the change
# point, the run table sorts, the call tree folds, no network request.
# Needs: chromium and python3 (scripts/install-deps.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_html

need_chromium

results_repo "$T/repo"

CLOCK=1796097200
record() {
	local sha=$1; shift
	gen --population 100 --months 1 "$@" -o "$T/s.pyisession"
	printf '{"months": 1, "mem": {"peak_mb": 700}}\n' >"$T/stats.json"
	record_session ci-1 "$sha" --stats "$T/stats.json"
}
# three runs of the old code, three with a new function taking ~15%: one step
for i in 1 2 3; do record "$(printf 'a%.0s' {1..39})$i" --seed $i; done
for i in 4 5 6; do record "$(printf 'b%.0s' {1..39})$i" --seed $i --new-function slow_path:0.15; done

# --- trend --html ------------------------------------------------------------
"$RESULTS" trend --html "$T/repo/trends.html" --title "Nightly <profiling>" \
	--commit-url "https://example.invalid/commit/{commit}" 2>/dev/null
H=$T/repo/trends.html
[ -s "$H" ] || fail "trend --html wrote nothing"
grep -q "<title>Nightly &lt;profiling&gt;</title>" "$H" || fail "title not escaped"
! grep -Eq '<(script|link|img)[^>]+(src|href)="(https?:)?//' "$H" || fail "the page loads something from the network"
[ "$(grep -c '<svg' "$H")" -ge 4 ] || fail "fewer than 4 charts"
grep -q 'class="cp"' "$H" || fail "no change point marked"
# the new function's own-time chart marks the step where it appeared
grep -Eq 'data-series="slow_path \([^"]*\)" data-points="6" data-change-points="[1-9]' "$H" ||
	fail "the new function's chart has no change point: $(grep -o 'data-series="slow_path[^>]*' "$H")"
# every point links to a committed summary.md that exists in the tree
first_link=$(grep -o -m1 '<a href="runs/[^"]*summary.md"' "$H" | sed -n '1s/<a href="//; 1s/"$//p')
[ -n "$first_link" ] && [ -f "$T/repo/$first_link" ] || fail "point link '$first_link' does not resolve"
grep -q 'href="https://example.invalid/commit/bbbbbbb' "$H" || fail "commit links missing"
pass "trend --html writes one self-contained page with charts, change points and links"

python3 "$BROWSER_DIR/check_html.py" trend "$H" "$T/shots" 4 1 || fail "trend page in Chromium"
pass "trend page renders in headless Chromium"

# --- site ----------------------------------------------------------------------
"$RESULTS" site "$T/site" --title "Nightly" 2>/dev/null
for f in index.html trends.html; do [ -s "$T/site/$f" ] || fail "site lacks $f"; done
[ "$(ls "$T/site/runs" | grep -vc "\.diff\.html$")" = 6 ] || fail "site should have 6 run pages: $(ls "$T/site/runs")"
# and a differential flame graph for each run that has a run before it (issue 10)
[ "$(ls "$T/site/runs" | grep -c "\.diff\.html$")" = 5 ] || fail "site should have 5 flame graphs: $(ls "$T/site/runs")"
grep -q '<details' "$T/site/runs/"*-bbbbbbb.html || fail "run page lacks the call tree"
python3 "$BROWSER_DIR/check_html.py" site "$T/site" "$T/shots" 6 4 || fail "site in Chromium"
pass "site renders in headless Chromium: sortable index, run pages with call tree, trends"

# --- errors ----------------------------------------------------------------------
code=0; "$RESULTS" trend --format markdown >/dev/null 2>&1 || code=$?
[ "$code" = 2 ] || fail "trend --format markdown should exit 2, got $code"
code=0; "$RESULTS" site >/dev/null 2>&1 || code=$?
[ "$code" = 2 ] || fail "site without a directory should exit 2, got $code"
pass "usage errors exit 2"
echo "all html tests passed"
