#!/usr/bin/env bash
# The run's timelines (issue 22), looked at in headless Chromium: on the
# site's run page and on `results open`'s page, the phases' shares over
# the run (one band per phase and "other", in their colours on the
# screenshot), the process tree's memory and CPU from `results run`, and
# every numeric column of a logged-stats CSV as a chart; a hostile column
# name is text, never markup.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_run_charts
need_chromium

SHA=0123456789abcdef0123456789abcdef01234567
results_repo "$T/repo"
mkdir -p "$T/o"
cat >"$T/model.py" <<'PY'
import shutil, sys, time
out, session = sys.argv[1], sys.argv[2]
keep = []
with open(out + "/pop.logged-stats.csv", "w") as f:
    f.write('date,population,queue_length,label,"<script>alert(1)</script>"\n')
    for m in range(24):
        keep.append(bytearray(4 * 1024 * 1024))
        for i in range(0, len(keep[-1]), 4096):
            keep[-1][i] = 1
        t = time.process_time()
        while time.process_time() - t < 0.03:
            pass
        f.write("2026-%02d-01,%d,%d,x,%d\n" % (m % 12 + 1, 1000 + 37 * m, (m * 7) % 13, m))
shutil.copy(session, out + "/run.pyisession")
PY
expect_status 0 "$RESULTS" run --commit "$SHA" --out "$T/o" -- python3 "$T/model.py" "$T/o" \
	"$RS_SOURCE_DIR/tests/data/real_small_pop1k.pyisession"
"$RESULTS" site "$T/site" >/dev/null
page=$(ls "$T"/site/runs/*-manual-*.html | grep -v diff | head -1)
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$page" || fail "the hostile column name is not escaped"
! grep -q '<script>alert(1)' "$page" || fail "a column name reached the page as markup"
# default phases of the real session: 3 (simulate, make_initial_population,
# build_simulation); logged charts: population, queue_length and the
# hostile-named numeric column (date and label are not numbers)
python3 "$BROWSER_DIR/check_html.py" runcharts "$page" "$T/shots" 3 3 1 || fail "site run page timelines in Chromium"
pass "site run page: phases over the run, logged statistics, memory and CPU, in Chromium"

expect_status 0 "$RESULTS" open "$SHA" -o "$T/open.html"
python3 "$BROWSER_DIR/check_html.py" runcharts "$T/open.html" "$T/shots" 3 3 1 || fail "open page timelines in Chromium"
python3 "$BROWSER_DIR/check_html.py" open "$T/open.html" "$T/shots" MainThread || fail "open's call tree with the charts above it"
pass "results open: the same timelines above the call tree"
