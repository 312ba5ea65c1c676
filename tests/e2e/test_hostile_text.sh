#!/bin/bash
# Hostile text through every field that reaches a reader. A session whose
# frames (function, class, file) and target hold backticks, '|', newlines,
# <img onerror>, <script>, quotes and ESC/BEL sequences; a run recorded
# with such a branch, message and --meta keys and values (accept= among
# them); an index line edited to hold them. Then:
#   - Markdown (README.md, summary.md, compare and check --format markdown)
#     is rendered with cmark-gfm (raw HTML let through, as GitHub's
#     sanitizer would see it) and parsed: no element or attribute that the
#     page does not write itself, every table row as wide as its header,
#     and the hostile text shown as text;
#   - HTML pages (site, open, compare --deep --html, trend --html) are
#     parsed: no injected element or attribute, no script but the page's;
#     their flame graphs are driven in headless Chromium: a zoom into the
#     hostile frame and a search for '</script> "q"...' run no script and
#     add no element;
#   - the terminal (list, show, compare, check, errors) gets no control byte;
#   - -o/--html FILE and open --force replace a symlink at FILE instead of
#     writing through it.
set -euo pipefail
. "$(dirname "$0")/lib.sh" test_hostile_text

command -v cmark-gfm >/dev/null || fail "cmark-gfm is not installed (scripts/install-deps.sh)"
ok() { echo "ok - $*"; }

# The hostile text, without NUL (a session's frame fields are NUL-separated).
EVIL=$'x`y``|z <img src=x onerror=alert(1)>\n<script>alert(2)</script> "q" \'a\' &amp; [l](javascript:alert(3)) \e]0;pwn\a\e[31mred'
# A branch holds no control character (results add refuses them).
EVIL_BRANCH='b`r``|<img src=x onerror=alert(1)><script>alert(2)</script> "q" &amp; | end'
export EVIL EVIL_BRANCH

python3 - "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_4.6.2.pyisession" "$T" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
evil = os.environ["EVIL"]
d = json.load(open(src))
json.dump(d, open(out + "/base.pyisession", "w"))
# the head: "values" renamed to the hostile name in a hostile class and
# file, ten times slower, so that every report names it
for rec in d["frame_records"]:
    stack = rec[0]
    if any(f.startswith("values\0") for f in stack):
        rec[1] *= 10
    rec[0] = [f.replace("values\0/home/user/tiny/tiny_workload.py", evil + "\0/home/" + evil + ".py")
               .replace("\x01cModel", "\x01c" + evil) for f in stack]
d["target_description"] = "Profile at " + evil
json.dump(d, open(out + "/head.pyisession", "w"))
PY

git init -q --bare "$T/origin.git"
git clone -q "$T/origin.git" "$T/ci" 2>/dev/null
cd "$T/ci"
"$RESULTS" init --remote "file://$T/store" >/dev/null
A=1111111111111111111111111111111111111111
B=2222222222222222222222222222222222222222
RESULTS_RECORDED_AT=1764494000 "$RESULTS" add "$T/base.pyisession" --commit $A --trigger ci \
	--branch "$EVIL_BRANCH" >/dev/null
RESULTS_RECORDED_AT=1764494100 "$RESULTS" add "$T/head.pyisession" --commit $B --trigger ci \
	--branch "$EVIL_BRANCH" -m "$EVIL" --meta "accept=$EVIL" --meta "note=v$EVIL" >/dev/null
HEAD_RUN=$(git ls-tree -r --name-only HEAD | grep '/run.json$' | sort | tail -1 | xargs dirname)
[ -n "$HEAD_RUN" ] || fail "set-up: no run recorded"
# A hostile clone's run.json: a --meta key add would refuse (the HTML pages read it).
python3 - "$HEAD_RUN/run.json" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
r.setdefault("meta", {})["k|<b>" + os.environ["EVIL"]] = "v"
json.dump(r, open(sys.argv[1], "w"), indent=2)
PY
git commit -qam "a hostile meta key"
git push -q origin main 2>/dev/null

# md_check FILE WHAT: render FILE with cmark-gfm and parse the HTML.
md_check() {
	cmark-gfm --unsafe -e table -e strikethrough -e autolink -e tagfilter "$1" >"$1.html"
	python3 - "$1.html" "$2" <<'PY'
import html.parser, os, sys
page, what = sys.argv[1], sys.argv[2]
evil = os.environ["EVIL"]
# what Markdown itself makes, and the raw HTML the reports write (check's <details>)
allowed = {"h1", "h2", "h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "code",
           "strong", "em", "ul", "ol", "li", "a", "details", "summary", "br", "hr", "pre", "del"}
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad, self.text, self.rows, self.width = [], [], [], None
    def handle_starttag(self, tag, attrs):
        if tag not in allowed:
            self.bad.append(tag)
        for k, v in attrs:
            if k.startswith("on") or k not in ("href", "align", "title"):
                self.bad.append(tag + "@" + k)
            if k == "href" and v and v.lower().startswith(("javascript:", "data:")):
                self.bad.append("href=" + v)
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th") and self.rows:
            self.rows[-1] += 1
        if tag == "thead":
            self.width = None
    def handle_endtag(self, tag):
        if tag == "thead" and self.rows:
            self.width = self.rows[-1]
        if tag == "table":
            self.width = None
    def handle_data(self, d):
        self.text.append(d)
p = P()
p.feed(open(page, encoding="utf-8").read())
if p.bad:
    sys.exit("%s: injected HTML: %s" % (what, sorted(set(p.bad))))
text = "".join(p.text)
# the hostile text is shown, as text (newlines as spaces, ESC/BEL visible)
shown = evil.replace("\n", " ").replace("\x1b", "\\x1b").replace("\x07", "\\x07")
if "<img src=x onerror=alert(1)>" not in text or "<script>alert(2)</script>" not in text:
    sys.exit("%s: the hostile text is not shown as text" % what)
if "\x1b" in text or "\x07" in text:
    sys.exit("%s: a control byte is in the page" % what)
PY
}

# tables_even FILE WHAT: every row of every GFM table has its header's cell count.
tables_even() {
	python3 - "$1.html" "$2" <<'PY'
import re, sys
page, what = sys.argv[1], sys.argv[2]
for t in re.findall(r"<table>.*?</table>", open(page, encoding="utf-8").read(), re.S):
    rows = re.findall(r"<tr>(.*?)</tr>", t, re.S)
    widths = [len(re.findall(r"<t[hd][ >]", r)) for r in rows]
    if len(set(widths)) > 1:
        sys.exit("%s: a table row was split or merged: widths %s" % (what, widths))
PY
}

md_page() { # md_page FILE WHAT: both checks
	md_check "$1" "$2" || fail "$2"
	tables_even "$1" "$2" || fail "$2"
	ok "$2: no injected HTML, tables intact"
}

git show HEAD:README.md >"$T/README.md"
md_page "$T/README.md" "README.md"
git show "HEAD:$HEAD_RUN/summary.md" >"$T/summary.md"
md_page "$T/summary.md" "summary.md"
"$RESULTS" compare "$A" "$B" --format markdown >"$T/compare.md"
md_page "$T/compare.md" "compare --format markdown"
"$RESULTS" check "$B" --format markdown >"$T/check.md" || true
md_page "$T/check.md" "check --format markdown"
"$RESULTS" compare "$A" "$B" --deep --format markdown >"$T/deep.md"
md_page "$T/deep.md" "compare --deep --format markdown"

# html_check FILE WHAT: parse a page; only the page's own elements and script.
html_check() {
	python3 - "$1" "$2" <<'PY' || fail "$2"
import html.parser, os, sys
page, what = sys.argv[1], sys.argv[2]
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad, self.text, self.in_script, self.script = [], [], False, []
    def handle_starttag(self, tag, attrs):
        if tag == "img" or tag == "iframe" or tag == "object":
            self.bad.append(tag)
        for k, v in attrs:
            if k.startswith("on"):
                self.bad.append(tag + "@" + k)
            if k in ("href", "src") and v and v.strip().lower().startswith(("javascript:", "data:")):
                self.bad.append(k + "=" + v)
        self.in_script = tag == "script"
    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False
    def handle_data(self, d):
        (self.script if self.in_script else self.text).append(d)
p = P()
p.feed(open(page, encoding="utf-8").read())
if any("alert(" in s for s in p.script):
    p.bad.append("script from the run")
if p.bad:
    sys.exit("%s: injected HTML: %s" % (what, sorted(set(p.bad))))
text = "".join(p.text)
if "\x1b" in text or "\x07" in text:
    sys.exit("%s: a control byte is in the page" % what)
if "onerror=alert(1)" not in text:
    sys.exit("%s: the hostile text is not shown" % what)
PY
	ok "$2: no injected element or attribute"
}

"$RESULTS" site "$T/site" >/dev/null 2>&1 || fail "results site"
for f in "$T/site/index.html" "$T/site"/runs/*.html; do
	html_check "$f" "site $(basename "$f")"
done
"$RESULTS" open "$B" -o "$T/open.html" >/dev/null
html_check "$T/open.html" "open"
"$RESULTS" compare "$A" "$B" --deep --html "$T/flame.html" >/dev/null
html_check "$T/flame.html" "compare --deep --html"
"$RESULTS" trend --html "$T/trend.html" --function "$EVIL" >/dev/null 2>&1 || fail "trend --html"
html_check "$T/trend.html" "trend --html"

# The flame graphs' script in headless Chromium: zoom into the hostile
# frame (its name in the zoom path), search for a piece of it holding
# </script> and quotes; nothing from the names runs or appears.
need_chromium
HEAD_PAGE=$(ls "$T/site/runs/"*.html | grep -v '\.diff\.html$' | sort | tail -1)
for page in "$T/flame.html" "$T/open.html" "$HEAD_PAGE" "$T/site/runs/"*.diff.html; do
	python3 "$BROWSER_DIR/check_html.py" zoom "$page" "$T/shots" '<script>alert(2)</script>' \
		"</script> \"q\" 'a' &amp;" >"$T/zoom.out" 2>&1 || { cat "$T/zoom.out"; fail "flame graph of $(basename "$page") with hostile names"; }
	ok "$(basename "$page"): the flame graph zooms and searches hostile names as text"
done

# --- the terminal --------------------------------------------------------
# An index line edited by hand (a hostile clone): ESC/BEL in every field.
SHARD=$(git ls-tree -r --name-only HEAD index/ | grep -vE '^index/(branches|commits)/' | head -1)
python3 - "$SHARD" <<'PY'
import json, os, sys
evil = os.environ["EVIL"]
lines = open(sys.argv[1]).read().splitlines()
e = json.loads(lines[-1])
e["trigger"] = evil
e["recorded_at"] = "2026-01-01T00:00:00Z\x1b[2J"
lines[-1] = json.dumps(e)
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
git commit -qam "a hostile index line"
no_controls() { # no_controls WHAT FILE...: no ESC or BEL byte
	if LC_ALL=C grep -q $'[\e\a]' "${@:2}"; then
		fail "$1: a control byte reached the terminal"
	fi
	ok "$1: no control byte on the terminal"
}
"$RESULTS" list >"$T/list.out" 2>&1 || fail "results list"
grep -qF 'onerror=alert(1)' "$T/list.out" || fail "list: the branch is not shown"
no_controls "list" "$T/list.out"
"$RESULTS" show "$B" >"$T/show.out" 2>&1 || fail "results show"
no_controls "show" "$T/show.out"
"$RESULTS" compare "$A" "$B" >"$T/compare.out" 2>&1 || fail "results compare"
grep -qF '\x1b]0;pwn\x07' "$T/compare.out" || fail "compare: the function name is not shown, escaped"
no_controls "compare" "$T/compare.out"
"$RESULTS" check "$B" >"$T/check.out" 2>&1 || true
no_controls "check" "$T/check.out"
"$RESULTS" compare "$A" "no-such-run-$EVIL" >"$T/err.out" 2>&1 && fail "an unknown run was found"
no_controls "an error message" "$T/err.out"

# --- output files replace a symlink, never write through it -----------------
printf 'victim\n' >"$T/victim"
for how in "compare --deep --html" "trend --html" "open --force" "check -o" "compare -o"; do
	rm -f "$T/link"
	ln -s "$T/victim" "$T/link"
	case $how in
	"compare --deep --html") "$RESULTS" compare "$A" "$B" --deep --html "$T/link" >/dev/null ;;
	"trend --html") "$RESULTS" trend --html "$T/link" >/dev/null 2>&1 ;;
	"open --force") "$RESULTS" open "$B" -o "$T/link" --force >/dev/null ;;
	"check -o") "$RESULTS" check "$B" -o "$T/link" >/dev/null || true ;;
	"compare -o") "$RESULTS" compare "$A" "$B" -o "$T/link" >/dev/null ;;
	esac
	[ "$(cat "$T/victim")" = victim ] || fail "$how wrote through the symlink into its target"
	[ -f "$T/link" ] && [ ! -L "$T/link" ] || fail "$how did not replace the symlink with its file"
	ok "$how: a symlink at FILE is replaced, its target unchanged"
done
# without --force, open refuses a link that is there, even a dangling one
rm -f "$T/link"
ln -s "$T/nowhere" "$T/link"
expect_status 2 "$RESULTS" open "$B" -o "$T/link"
[ ! -e "$T/nowhere" ] || fail "open wrote through a dangling symlink"
ok "open without --force: an existing (dangling) symlink is refused, nothing created"

# --- culprits: a hostile function named in check's culprit section ----------
# The same program (so check has a baseline) with a new, hostile callee of
# "step" that takes as long again as the run (duration and CPU time grow
# with it): check blames the new call and shows its call path, in Markdown
# and on the terminal.
python3 - "$RS_SOURCE_DIR/tests/data/tiny_pyinstrument_4.6.2.pyisession" "$T" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
evil = os.environ["EVIL"]
d = json.load(open(src))
added = []
for stack, t in d["frame_records"]:
    if stack[-1].startswith("<listcomp>\0"):
        added.append([stack[:-2] + [evil + "\0/home/user/tiny/tiny_workload.py\0" + "40\x01l41"], t])
d["frame_records"] += added
grow = sum(t for _, t in added)
d["duration"] += grow
d["cpu_time"] += grow
d["sample_count"] += len(added)
json.dump(d, open(out + "/slow.pyisession", "w"))
PY
git init -q --bare "$T/origin2.git"
git clone -q "$T/origin2.git" "$T/ci2" 2>/dev/null
cd "$T/ci2"
"$RESULTS" init --remote "file://$T/store2" >/dev/null
RESULTS_RECORDED_AT=1764494000 "$RESULTS" add "$T/base.pyisession" --commit $A --trigger ci >/dev/null
RESULTS_RECORDED_AT=1764494100 "$RESULTS" add "$T/slow.pyisession" --commit $B --trigger ci >/dev/null
"$RESULTS" check "$B" --format markdown >"$T/culprit.md" || true
grep -q 'Culprits' "$T/culprit.md" || { cat "$T/culprit.md"; fail "set-up: check names no culprit"; }
grep -qF 'onerror=alert(1)' "$T/culprit.md" || fail "set-up: the culprit is not the hostile function"
md_page "$T/culprit.md" "check --format markdown, culprits"
"$RESULTS" check "$B" >"$T/culprit.out" 2>&1 || true
grep -q 'call path' "$T/culprit.out" || fail "check: no culprit call path on the terminal"
no_controls "check, culprits" "$T/culprit.out"
