#!/usr/bin/env bash
# results site is incremental (issue 21): a second build into the same
# folder rewrites no run page; after one new run it writes that run's page
# and diff page (and index.html, trends.html) only, and every page equals
# what a full build writes; a changed option or --full rewrites them all.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_site_incremental
export RS_BIN_DIR
gen --seed 5 --samples 80 -o "$T/s.pyisession"
"$RS_SOURCE_DIR/bench/scale_history.sh" 40 "$T/h" >/dev/null 2>"$T/h.err" ||
	{ cat "$T/h.err" >&2; fail "scale_history.sh"; }
cd "$T/h/clone"
pages() { find "$T/site/runs" -name '*.html' | wc -l; }
# written_since MARKER: the files of the site newer than MARKER, sorted
written_since() { (cd "$T/site" && find . -type f -newer "$1" | sort | tr '\n' ' '); }

expect_status 0 "$RESULTS" site "$T/site"
grep -q "and 40 run pages" "$T/err" || fail "first build: $(cat "$T/err")"
total=$(pages)
touch -d '1 minute ago' "$T/m1" && find "$T/site" -exec touch -d '2 minutes ago' {} +
expect_status 0 "$RESULTS" site "$T/site"
grep -q "and 0 run pages" "$T/err" || fail "second build: $(cat "$T/err")"
[ "$(written_since "$T/m1")" = "./.results-site.json ./index.html ./trends.html " ] ||
	fail "a build with nothing new wrote $(written_since "$T/m1")"
pass "a second build rewrites only index.html and trends.html"

last=$(git log -1 --format=%ct)
RESULTS_RECORDED_AT=$((last + 60)) expect_status 0 "$RESULTS" add "$T/s.pyisession" \
	--commit "$(printf 'a%.0s' {1..40})" --trigger nightly --branch main
id=$(git log -1 --format=%s | sed 's/^Record run //')
find "$T/site" -exec touch -d '2 minutes ago' {} +
expect_status 0 "$RESULTS" site "$T/site"
grep -q "and 1 run pages" "$T/err" || fail "build after one run: $(cat "$T/err")"
[ "$(written_since "$T/m1")" = "./.results-site.json ./index.html ./runs/$id.diff.html ./runs/$id.html ./trends.html " ] ||
	fail "a build after one new run wrote $(written_since "$T/m1")"
[ "$(pages)" = $((total + 2)) ] || fail "the site holds $(pages) pages, not $((total + 2))"
expect_status 0 "$RESULTS" site "$T/full" --full
diff -r -x .results-site.json "$T/site" "$T/full" >"$T/diff" || fail "the incremental site differs from a full build: $(head -20 "$T/diff")"
pass "one new run rewrites its own pages and the indexes only, and the site equals a full build"

find "$T/site" -exec touch -d '2 minutes ago' {} +
expect_status 0 "$RESULTS" site "$T/site" --title "Another title"
grep -q "and 41 run pages" "$T/err" || fail "another title: $(cat "$T/err")"
expect_status 0 "$RESULTS" site "$T/site" --title "Another title" --full
grep -q "and 41 run pages" "$T/err" || fail "--full: $(cat "$T/err")"
printf 'not json' >"$T/site/.results-site.json"
expect_status 0 "$RESULTS" site "$T/site" --title "Another title"
grep -q "and 41 run pages" "$T/err" || fail "a corrupt state: $(cat "$T/err")"
rm "$T/site/runs/$id.html"
expect_status 0 "$RESULTS" site "$T/site" --title "Another title"
grep -q "and 1 run pages" "$T/err" && [ -s "$T/site/runs/$id.html" ] || fail "a deleted page: $(cat "$T/err")"
pass "another option, --full, a corrupt state or a deleted page rewrite what they must"
