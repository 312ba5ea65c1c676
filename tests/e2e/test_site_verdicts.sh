#!/usr/bin/env bash
# End-to-end test of the pages a team reads (issue 19, section 5): the
# site's index gives every run the verdict `results check` gives it, with
# its change and metric, a regression's row stands out, each verdict
# links to the run's flame graph against its baseline; the trend charts
# put commits on the axis, mark the verdicts and explain the runs left
# out. A generated series of a noisy runner (tests/gen-session):
#   c1 c2 c3 c3  reruns with a runner's noise          -> no change
#   c4           a heavily loaded runner (--load 2.1)   -> the machine was slower
#   c5           a new function taking 15% of the run   -> regression
#   c6           the new function gone, three hot pandas
#                functions 5x faster                    -> improvement
#   c7           4x the population                      -> not comparable
#   c8           a rerun of c6's code                   -> no change
# Each page is rendered in headless Chromium and screenshotted
# (tests/browser/check_html.py verdicts): the regression row's pixels
# are its highlight colour, the charts are drawn, the tick labels do not
# overlap; the screenshots are kept in $RS_SHOTS_DIR (the build's
# test-artefacts/site-verdicts) for a person to look at.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_site_verdicts

need_chromium
SHOTS=${RS_SHOTS_DIR:-$RS_BIN_DIR/test-artefacts/site-verdicts}
rm -rf "$SHOTS"
mkdir -p "$SHOTS"

results_repo "$T/repo"
CLOCK=1796097200
# record N POPULATION GEN-OPTIONS...: commit cN (lib.sh's noisy-runner series)
record() { local n=$1 pop=$2; shift 2; record_runner "$n" "$pop" --population "$pop" "$@"; }
FAST=(--slow maybe_shape:0.2 --slow _init_na:0.2 --slow _round:0.2)
record 1 100 --run 1
record 2 100 --run 2
record 3 100 --run 3
record 3 100 --run 4
record 4 100 --run 5 --load 2.1
record 5 100 --run 6 --new-function slow_path:0.15
record 6 100 --run 7 "${FAST[@]}"
record 7 400 --run 8 "${FAST[@]}"
record 8 100 --run 9 "${FAST[@]}"

# What `results check` says of each run, the reference the pages must match.
mapfile -t IDS < <("$RESULTS" list --json | python3 -c '
import json, sys
for r in reversed(json.load(sys.stdin)):
    print(r["id"])')
[ "${#IDS[@]}" = 9 ] || fail "9 runs recorded, list shows ${#IDS[@]}"
for i in "${!IDS[@]}"; do
	"$RESULTS" check "${IDS[$i]}" --format json >"$T/check.$i.json" 2>/dev/null || true
done
# the class each check verdict is shown with, from check's JSON
python3 - "$T" "${#IDS[@]}" >"$T/want" <<'EOF' || fail "results check does not give the series' verdicts"
import json, sys
T, n = sys.argv[1], int(sys.argv[2])
got = []
for i in range(n):
    c = json.load(open('%s/check.%d.json' % (T, i)))
    v = c.get('verdict', '')
    if 'no earlier run' in v or 'no comparable' in v:
        k = 'not-comparable'
    elif 'machine was slower' in v:
        k = 'machine'
    elif c.get('regressed') in (True, 1):
        k = 'regression'
    elif ': faster' in v:
        k = 'improvement'
    else:
        k = 'no-change'
    print('run %d: %s -> %s' % (i + 1, v, k), file=sys.stderr)
    got.append(k)
# the shapes of the series, as the gate judges them
assert got[0] == 'not-comparable' and got[4] == 'machine' and got[5] == 'regression', got
assert got[6] == 'improvement' and got[7] == 'not-comparable' and got[8] != 'regression', got
assert all(k in ('no-change', 'machine') for k in got[1:4]), got
print(' '.join(got))
EOF
read -r -a want <"$T/want"
pass "results check: the series has each verdict"

# --- the site ---------------------------------------------------------------------
"$RESULTS" site "$T/site" --title "Nightly" 2>/dev/null
I=$T/site/index.html
python3 - "$T/site" "${want[@]}" <<'EOF' || fail "the index's verdicts"
import html.parser, json, os, sys
site, want = sys.argv[1], sys.argv[2:]
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.cell, self.row = [], None, None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == 'tr' and self.row is None:
            self.row = {'attrs': a, 'cells': [], 'links': []}
        elif tag == 'td' and self.row is not None:
            self.cell = {'attrs': a, 'text': ''}
        elif tag == 'a' and self.row is not None:
            self.row['links'].append((a.get('href', ''), (self.cell or {}).get('attrs', {}).get('class', ''), a.get('title', '')))
    def handle_data(self, d):
        if self.cell is not None:
            self.cell['text'] += d
    def handle_endtag(self, tag):
        if tag == 'td' and self.row is not None and self.cell is not None:
            self.row['cells'].append(self.cell)
            self.cell = None
        elif tag == 'tr' and self.row is not None:
            if self.row['cells']:
                self.rows.append(self.row)
            self.row = None
p = P()
p.feed(open(os.path.join(site, 'index.html'), encoding='utf-8').read())
rows = list(reversed(p.rows))            # the index is newest first
assert len(rows) == len(want), '%d rows, want %d' % (len(rows), len(want))
for i, (r, w) in enumerate(zip(rows, want)):
    cls = r['attrs'].get('class', '')
    verdict = [c for c in r['cells'] if c['attrs'].get('class') == 'verdict'][0]
    change = [c for c in r['cells'] if 'change' in c['attrs'].get('class', '')][0]
    print('row %d: class %r, verdict %r, change %r' % (i + 1, cls, verdict['text'].strip(), change['text'].strip()))
    assert cls == 'v-' + w, 'row %d: class %r, want v-%s' % (i + 1, cls, w)
    if w == 'regression':
        assert verdict['text'].strip().startswith('\u25b2 regression'), verdict['text']
        assert change['text'].startswith('+') and '%' in change['text'] and 'wall time' in change['text'], change['text']
    if w == 'improvement':
        assert verdict['text'].strip().startswith('\u25bc improvement'), verdict['text']
        assert change['text'].startswith('-'), change['text']
    if w == 'machine':
        assert 'machine slower' in verdict['text'], verdict['text']
    if i == 4:    # the loaded runner: judged on CPU time, and the index says so
        assert 'CPU time' in change['text'], change['text']
    if w == 'not-comparable' and i > 0:
        assert 'population 400' in verdict['text'], verdict['text']
    # the verdict links to a flame graph page that exists, titled with the check's line
    links = [l for l in r['links'] if l[1] == 'verdict']
    if i > 0 and w != 'not-comparable':
        assert links, 'row %d: the verdict has no link' % (i + 1)
        href = links[0][0]
        assert href.endswith('.diff.html') and os.path.isfile(os.path.join(site, href)), href
        page = open(os.path.join(site, href), encoding='utf-8').read()
        assert 'against its check baseline' in page, href
        assert links[0][2], 'row %d: the link has no title' % (i + 1)
    for href, _, _ in r['links']:
        if '://' not in href:
            assert os.path.isfile(os.path.join(site, href)), 'row %d: link %s does not resolve' % (i + 1, href)
EOF
pass "site index: each run's verdict as results check gives it, the change and metric, links to flame graphs"

# the regression's flame graph shows the new function against the baseline
reg=${IDS[5]}
grep -q 'slow_path' "$T/site/runs/$reg.diff.html" || fail "the regression's flame graph lacks the new function"
pass "the regression's verdict links to its flame graph against its baseline"

# --- the trend charts ---------------------------------------------------------
T1=$T/site/trends.html
python3 - "$T1" "${IDS[@]}" <<'EOF' || fail "the trend chart's marks"
import re, sys
page, ids = open(sys.argv[1], encoding='utf-8').read(), sys.argv[2:]
fig = page[page.index('<figure class="chart" data-series="duration"'):]
fig = fig[:fig.index('</figure>')]
ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', fig)
assert 'c100000' in ticks and 'c500000' in ticks, 'commit ticks: %s' % ticks
assert len(re.findall(r'class="mk-regression"', fig)) == 1, 'one regression marker'
assert len(re.findall(r'class="mk-improvement"', fig)) == 1, 'one improvement marker'
assert re.search(r'class="legend"', fig), 'a legend'
lo = fig[fig.index('<ul class="left-out">'):]
items = re.findall(r'<li>(.*?)</li>', lo, re.S)
text = ' '.join(items)
assert any(ids[4] in i and 'machine was slower' in i for i in items), 'the loaded run explained: %s' % items
assert any(ids[7] in i and 'population' in i for i in items), 'the 4x run explained: %s' % items
assert len(re.findall(r'class="pt out"', fig)) >= 1, 'the loaded run is drawn hollow'
assert len(re.findall(r'class="outm"', fig)) >= 1, 'the other configuration is marked on the axis'
print('ticks', ticks, 'left out', len(items))
EOF
pass "trend chart: commits on the axis, verdicts marked with a legend, left-out runs explained"

python3 "$BROWSER_DIR/check_html.py" verdicts "$T/site" "$SHOTS" "${IDS[5]}" "${IDS[6]}" ||
	fail "the site's pages in Chromium"
pass "site pages in headless Chromium: the regression row highlighted, charts drawn, labels apart"

# --- trend --html marks the same verdicts ------------------------------------
"$RESULTS" trend --html "$T/trend.html" 2>/dev/null
grep -c 'class="mk-regression"' "$T/trend.html" >/dev/null || fail "trend --html marks no regression"
grep -q 'machine was slower' "$T/trend.html" || fail "trend --html does not explain the loaded run"
pass "trend --html marks the verdicts and explains the left-out runs"
echo "all site verdict tests passed"
