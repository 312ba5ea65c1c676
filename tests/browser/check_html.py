#!/usr/bin/env python3
"""Headless Chromium checks of the pages that `results trend --html` and
`results site` write, with Chromium's own command line and no Node.js
(Debian 12's Node.js 18 is too old for current browser drivers).

The differential flame graph of `results compare --deep --html` and of
the site's runs/<id>.diff.html is checked with `flame`: the icicle is laid
out (frames inside the graph, the root row spans its width, no frame
sticks out of its parent's row), the new function is one red frame of
its share's width, a screenshot of the graph shows red and grey. The call
tree of `results open` is checked with `open`: the frames named are in the
tree (the first one at its top), children are sorted by total time, a
click on a folded line unfolds it, the buttons fold and unfold everything.

Each page is looked at twice by a fresh headless Chromium:
  * `--dump-dom` of a copy of the page with probe.js injected: after the
    page's own scripts ran, the probe measures the laid-out charts, clicks
    the table headers and the call tree through the page's own handlers,
    and writes what it saw as JSON into the DOM that Chromium prints. A
    Content-Security-Policy in the copy refuses every request that is not
    file: or data:, and the probe reports refused requests and script
    errors.
  * `--screenshot` of the page itself, unchanged, as tall as the page: the
    PNG is decoded here and its pixels counted, the charts cropped out of
    it by the boxes the probe measured.

usage:
  check_html.py trend <page.html> <shots-dir> <min-charts> <min-change-points>
  check_html.py site  <site-dir>  <shots-dir> <runs> [<min-charts>]
  check_html.py flame <page.html> <shots-dir> <new-function>
  check_html.py open  <page.html> <shots-dir> <top-frame> [<frame>...]
  check_html.py runcharts <page.html> <shots-dir> <phases> <logged-charts> <process 0|1>
  check_html.py zoom  <page.html> <shots-dir> <frame-text> [<search>]
Exits 0 when every check passes, 1 otherwise (messages on stderr), 2 on
usage errors.
"""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

CHROMIUM = os.environ.get('CHROMIUM', '/usr/bin/chromium')
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--hide-scrollbars', '--force-device-scale-factor=1',
         # nothing outside this machine, whatever the page asks for
         '--host-resolver-rules=MAP * ~NOTFOUND']
WIDTH = 1000
MAX_HEIGHT = 16000      # screenshot cap: a longer page is cut, not an error
TIMEOUT = 120           # seconds per Chromium run
HERE = os.path.dirname(os.path.abspath(__file__))

# First in <head>: record script errors and requests the policy refuses
# before any of the page's own scripts run.
HEAD = """<meta http-equiv="Content-Security-Policy" content="default-src file: data: 'unsafe-inline'">
<script>window.__rsErrors=[];window.__rsRefused=[];
window.addEventListener('error',function(e){var t=e.target||{};window.__rsErrors.push(e.message?String(e.message):'cannot load '+(t.src||t.href||t.tagName));},true);
document.addEventListener('securitypolicyviolation',function(e){window.__rsRefused.push(e.blockedURI);});
(function(){var ce=console.error;console.error=function(){window.__rsErrors.push(Array.prototype.join.call(arguments,' '));return ce.apply(console,arguments);};})();
window.__rsAlerts=[];window.alert=function(m){window.__rsAlerts.push(String(m));};
window.RS_PROBE=%s;</script>
"""

failures = 0


def check(cond, what):
    global failures
    if cond:
        print('ok - ' + what)
    else:
        print('FAIL: ' + what, file=sys.stderr)
        failures += 1


def chromium(args, what):
    profile = tempfile.mkdtemp(prefix='results-chromium-')
    try:
        p = subprocess.run([CHROMIUM] + FLAGS + ['--user-data-dir=' + profile] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors='replace')[-4000:])
        raise SystemExit('FAIL: chromium exited %d on %s' % (p.returncode, what))
    return p.stdout.decode(errors='replace')


def on_copy(page, text, prefix, look):
    """LOOK(path) of a temporary copy of PAGE holding TEXT, next to the page
    so that its relative links resolve the same; the copy is removed."""
    fd, copy = tempfile.mkstemp(prefix=prefix, suffix='.html', dir=os.path.dirname(page))
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
        return look(copy)
    finally:
        os.unlink(copy)


def probe(page, mode, width=WIDTH, extra=None):
    """The probe's findings on PAGE, rendered with scripts run; EXTRA:
    globals set for the probe (window.NAME = JSON value)."""
    with open(page, encoding='utf-8') as f:
        text = f.read()
    with open(os.path.join(HERE, 'probe.js'), encoding='utf-8') as f:
        script = '<script>\n' + f.read() + '</script>\n'
    head = HEAD % json.dumps(mode)
    for k, v in (extra or {}).items():
        head += '<script>window.%s=%s;</script>\n' % (k, json.dumps(v).replace('<', '\\u003c'))
    m = re.search(r'<head[^>]*>', text, re.I)
    text = text[:m.end()] + head + text[m.end():] if m else head + text
    i = text.lower().rfind('</body>')
    text = text[:i] + script + text[i:] if i >= 0 else text + script
    dom = on_copy(page, text, '.rs-probe-', lambda copy: chromium(
        ['--window-size=%d,800' % width, '--virtual-time-budget=5000', '--dump-dom', 'file://' + copy], page))
    m = re.search(r'<pre id="rs-probe" hidden="">(.*?)</pre>', dom, re.S)
    if not m:
        raise SystemExit('FAIL: the probe did not report on %s (did the page load?)' % page)
    return json.loads(html.unescape(m.group(1)))


def read_png(path):
    """(width, height, rows of RGB tuples): 8-bit RGB or RGBA, not interlaced."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise SystemExit('FAIL: %s is not a PNG' % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise SystemExit('FAIL: %s: unsupported PNG (depth %d, colour type %d)' % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b''.join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def pixel_stats(png, box=None):
    """Pixels by colour class, in BOX (x, y, width, height) or the whole image."""
    w, h, bpp, rows = png
    x0, y0, x1, y1 = 0, 0, w, h
    if box:
        x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
        x1, y1 = min(w, int(box[0] + box[2])), min(h, int(box[1] + box[3]))
    non_white = blue = red = 0
    for y in range(y0, y1):
        line = rows[y]
        for x in range(x0, x1):
            r, g, b = line[x * bpp], line[x * bpp + 1], line[x * bpp + 2]
            if r < 245 or g < 245 or b < 245:
                non_white += 1
            if b > 150 and r < 80 and 60 < g < 150:
                blue += 1               # #0969da line and points
            if r > 150 and g < 90 and b < 90:
                red += 1                # #cf222e change points
    return {'width': max(0, x1 - x0), 'height': max(0, y1 - y0),
            'nonWhite': non_white, 'blue': blue, 'red': red}


def screenshot(page, height, out, width=WIDTH):
    height = max(100, min(MAX_HEIGHT, int(height)))
    chromium(['--window-size=%d,%d' % (width, height), '--screenshot=' + out,
              'file://' + os.path.abspath(page)], page)
    png = read_png(out)
    check(png[0] == width and png[1] == height,
          '%s: screenshot is %dx%d (want %dx%d)' % (os.path.basename(out), png[0], png[1], width, height))
    return png


def check_page_common(name, seen):
    check(not seen['errors'], '%s: no script errors %s' % (name, '; '.join(seen['errors'])))
    check(not seen['external'], '%s: no network requests %s' % (name, ' '.join(seen['external'])))


def check_charts(page, shots, name, min_charts, min_cps):
    seen = probe(page, 'charts')
    info = seen['charts']
    check(len(info) >= min_charts, '%s: %d charts (want >= %d)' % (name, len(info), min_charts))
    check(all(c['width'] > 200 and c['height'] > 100 for c in info),
          '%s: every chart is laid out with a size' % name)
    check(all(c['path'] > 10 and c['points'] > 0 for c in info), '%s: every chart has a line and points' % name)
    check(all(c['links'] == c['points'] for c in info), '%s: every point links to its run' % name)
    cps = sum(c['cps'] for c in info)
    check(cps >= min_cps, '%s: %d change points marked (want >= %d)' % (name, cps, min_cps))
    check_page_common(name, seen)
    if not info:
        return seen

    # The screenshot checks: the page as rendered, unchanged; the first
    # chart must show the line in its colour, and the page is not blank.
    png = screenshot(page, seen['scrollHeight'], os.path.join(shots, name + '-page.png'))
    first = info[0]
    st = pixel_stats(png, (first['x'], first['y'], first['width'], first['height']))
    check(st['width'] > 200 and st['height'] > 100, '%s: chart screenshot %dx%d' % (name, st['width'], st['height']))
    check(st['blue'] > 200, '%s: chart screenshot shows the series line (%d line pixels)' % (name, st['blue']))
    check(st['nonWhite'] > 0.01 * st['width'] * st['height'],
          '%s: chart screenshot is not blank (%d non-white pixels)' % (name, st['nonWhite']))
    if min_cps > 0:
        with_cp = [c for c in info if c['changePointsAttr'] not in ('', '0')]
        check(bool(with_cp), '%s: a chart says it has change points' % name)
        if with_cp:
            c = with_cp[0]
            st2 = pixel_stats(png, (c['x'], c['y'], c['width'], c['height']))
            check(st2['red'] > 30, '%s: a change point is drawn (%d red pixels)' % (name, st2['red']))
    full = pixel_stats(png)
    check(full['nonWhite'] > 0.01 * full['width'] * full['height'],
          '%s: full-page screenshot is not blank (%d non-white pixels)' % (name, full['nonWhite']))
    return seen


FLAME_WIDTH = 1200      # window width for the flame graph: the graph is wider than 1000 px
FLAME_ROW = 18          # px per row of the icicle (src/analysis/deep.c FLAME_ROW)
NEW_RED = 'rgb(207, 34, 46)'


def grey_stats(png, box):
    """Red (the new subtree) and grey (unchanged frames) pixels in BOX."""
    w, h, bpp, rows = png
    x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
    x1, y1 = min(w, int(box[0] + box[2])), min(h, int(box[1] + box[3]))
    red = grey = 0
    for y in range(y0, y1):
        line = rows[y]
        for x in range(x0, x1):
            r, g, b = line[x * bpp], line[x * bpp + 1], line[x * bpp + 2]
            if r > 180 and g < 80 and b < 90:
                red += 1
            if abs(r - g) < 8 and abs(g - b) < 8 and 200 < r < 245:
                grey += 1
    return {'width': max(0, x1 - x0), 'height': max(0, y1 - y0), 'red': red, 'grey': grey}


def check_flame(page, shots, newfn):
    """The differential flame graph on PAGE, with NEWFN the one new function."""
    name = os.path.basename(page)
    seen = probe(page, 'flame', FLAME_WIDTH)
    g, frames = seen['flame']['graph'], seen['flame']['frames']
    check(g['width'] > 1000 and g['height'] > 100, '%s: graph laid out (%gx%g)' % (name, g['width'], g['height']))
    check(len(frames) > 50, '%s: %d frames drawn' % (name, len(frames)))
    top = g['y'] + g['clientTop']
    left, right = g['x'] - 1, g['x'] + g['width'] + 1
    rows = {}
    for f in frames:
        rows.setdefault(int(round((f['y'] - top) / FLAME_ROW)), []).append(f)
    root = rows.get(0, [])
    check(bool(root) and max(f['w'] for f in root) > 0.9 * g['width'],
          '%s: the root row spans the graph (%s px of %g)' % (name, root and max(f['w'] for f in root), g['width']))
    check(bool(frames) and all(left <= f['x'] and f['x'] + f['w'] <= right and f['y'] >= g['y'] - 1
                               and f['y'] + f['h'] <= g['y'] + g['height'] + 1 for f in frames),
          '%s: every frame lies inside the graph' % name)
    check(all(abs(f['y'] - top - r * FLAME_ROW) < 1.5 for r, fs in rows.items() for f in fs),
          '%s: every frame sits on a row' % name)
    orphans = [f['text'] for r, fs in rows.items() if r > 0 for f in fs
               if not any(p['x'] - 1 <= f['x'] and f['x'] + f['w'] <= p['x'] + p['w'] + 1
                          for p in rows.get(r - 1, []))]
    check(bool(frames) and not orphans,
          '%s: no frame sticks out of its parent\'s row %s' % (name, ' | '.join(orphans[:5])))
    nf = [f for f in frames if f['text'].startswith(newfn + ' ')]
    check(len(nf) == 1 and 'new' in nf[0]['cls'].split() and nf[0]['bg'] == NEW_RED,
          '%s: the new function %s is one red frame (%d frames, %s)'
          % (name, newfn, len(nf), nf and nf[0]['bg']))
    share = nf[0]['w'] / g['width'] if len(nf) == 1 and g['width'] else 0
    check(0.05 < share < 0.2, '%s: its width is its share of the run (%.3f)' % (name, share))
    check_page_common(name, seen)
    png = screenshot(page, seen['scrollHeight'], os.path.join(shots, name + '.png'), FLAME_WIDTH)
    st = grey_stats(png, (g['x'], g['y'], g['width'], g['height']))
    area = st['width'] * st['height']
    check(area > 0 and st['red'] > 0.01 * area,
          '%s: screenshot shows the new subtree in red (%d px of %d)' % (name, st['red'], area))
    check(area > 0 and st['grey'] > 0.05 * area,
          '%s: screenshot shows the unchanged callers in grey (%d px of %d)' % (name, st['grey'], area))


def check_open(page, shots, names):
    """The call tree page of `results open`; NAMES[0] the top frame."""
    name = os.path.basename(page)
    seen = probe(page, 'open')
    o = seen['open']
    check(o['details'] > 10 and o['leaves'] > 10,
          '%s: a call tree of %d foldable frames and %d leaves' % (name, o['details'], o['leaves']))
    check(bool(o['topNames']) and o['topNames'][0] == names[0],
          '%s: the top frame is %s (%s)' % (name, names[0], o['topNames'][:3]))
    for n in names[1:]:
        check(n in o['text'], '%s: frame %s is in the tree' % (name, n))
    check(o['sorted'], '%s: every frame\'s children are sorted by total time' % name)
    check(o['hot'] > 0, '%s: the heaviest frames are marked (%d)' % (name, o['hot']))
    check(o['openBefore'] is False and o['openAfter'] is True and o['childHeightBefore'] > 0
          and o['childHeightAfter'] > 1.5 * o['childHeightBefore'],
          "%s: a click on the folded line '%s' unfolds it (%s -> %s, %s -> %s px)"
          % (name, o['clickedName'], o['openBefore'], o['openAfter'], o['childHeightBefore'],
             o['childHeightAfter']))
    check(o['openAfterCollapse'] == 0 and o['openAfterExpand'] == o['details'],
          '%s: collapse all / expand all (%d, %d of %d open)'
          % (name, o['openAfterCollapse'], o['openAfterExpand'], o['details']))
    check(o['width'] > 200 and o['height'] > 100, '%s: the tree is laid out (%gx%g)' % (name, o['width'], o['height']))
    check_page_common(name, seen)
    png = screenshot(page, seen['scrollHeight'], os.path.join(shots, name + '.png'))
    full = pixel_stats(png)
    check(full['nonWhite'] > 0.01 * full['width'] * full['height'],
          '%s: screenshot is not blank (%d non-white pixels)' % (name, full['nonWhite']))
    check(full['red'] > 20, '%s: screenshot shows the heaviest frames in red (%d px)' % (name, full['red']))


PURPLE = (130, 80, 223)  # a frame found by the search (src/analysis/flame.c)
TIME_RE = re.compile(r'total [0-9][0-9.]* ?(s|ms|us|\u00b5s|min|h)\b')


def with_script(page, script, out, height, width):
    """Screenshot of a copy of PAGE with SCRIPT run on load (the page's own
    handlers do the work: a search typed, a frame clicked)."""
    with open(page, encoding='utf-8') as f:
        text = f.read()
    code = '<script>window.addEventListener("load",function(){%s});</script>\n' % script
    i = text.lower().rfind('</body>')
    text = text[:i] + code + text[i:] if i >= 0 else text + code
    return on_copy(page, text, '.rs-shot-', lambda copy: screenshot(copy, height, out, width))


def check_zoom(page, shots, name, target, needle=None, width=FLAME_WIDTH):
    """The interactive flame graph on PAGE: click-to-zoom into the frame
    whose text holds TARGET, the zoom path, Escape, the keyboard, the
    search (NEEDLE, else the target's function name), accessible names;
    then screenshots of the search before and after the zoom."""
    extra = {'RS_TARGET': target}
    if needle is not None:
        extra['RS_NEEDLE'] = needle
    seen = probe(page, 'zoom', width, extra)
    z = seen['zoom']
    check(z['graph'], '%s: a flame graph is on the page' % name)
    if not z['graph']:
        return
    frames, gw, t = z['frames'], z['graphWidth'], z['target']
    check(t >= 0, '%s: the frame %r is in the graph' % (name, target))
    if t < 0:
        return
    n = len(frames)
    near = lambda a, b, tol=1.5: abs(a - b) <= tol
    # accessible names
    check(z['treeRole'] == 'tree' and all(f['role'] == 'treeitem' for f in frames),
          '%s: the graph is a tree of %d treeitems' % (name, n))
    def named(f):
        fn = f['text'].rsplit(' (', 1)[0] if f['text'].endswith(')') else f['text']
        fl = f['text'].rsplit(' (', 1)[1][:-1] if f['text'].endswith(')') and ' (' in f['text'] else ''
        return (f['label'].startswith(fn) and (not fl or (' in ' + fl + ':') in f['label'])
                and TIME_RE.search(f['label']) is not None)
    bad = [f['label'] for f in frames if not named(f)]
    check(not bad, '%s: every frame\'s accessible name gives its function, file and time %s' % (name, bad[:3]))
    b, c = z['before'], z['clicked']
    check(z['visibleBefore'] == n, '%s: every frame is shown before a zoom (%d of %d)' % (name, z['visibleBefore'], n))
    # a frame as wide as the graph shows no zoom in a screenshot (the
    # hostile names' tiny session has no other): measured below only when narrower
    narrow = b['w'] < 0.9 * gw
    # click to zoom
    check(near(c['w'], gw) and near(c['left'], 0),
          '%s: a click zooms: the frame fills the graph (%g px at %g, graph %g px)' % (name, c['w'], c['left'], gw))
    check(near(c['top'], b['top']), '%s: the zoomed frame keeps its row (%g, %g px from the top)'
          % (name, c['top'], b['top']))
    def chain(i):
        out = []
        while i >= 0:
            out.append(i)
            i = frames[i]['p']
        return out
    keep = sum(1 for i in range(n) if t in chain(i) or i in chain(t))
    check(z['visibleClicked'] == keep, '%s: only its callers and its subtree are shown (%d of %d, want %d)'
          % (name, z['visibleClicked'], n, keep))
    check(not z['outside'], '%s: its callers span the graph, its callees lie inside it %s' % (name, z['outside']))
    check(z['focusedClicked'] == t, '%s: the clicked frame has the focus' % name)
    depth = frames[t]['d']
    check(len(z['path']) == depth + 2 and z['path'][0] == 'all'
          and frames[t]['text'].startswith(z['path'][-1]),
          '%s: the zoom path names the callers down to it %s' % (name, z['path']))
    check(near(z['afterAll']['w'], b['w'], 1) and z['visibleAfterAll'] == n,
          '%s: the zoom path\'s "all" goes back (%g px, %d shown)' % (name, z['afterAll']['w'], z['visibleAfterAll']))
    check(near(z['reclicked']['w'], gw) and near(z['escaped']['w'], b['w'], 1) and z['visibleEscaped'] == n,
          '%s: Escape resets the zoom (%g -> %g px, %d shown)' % (name, z['reclicked']['w'], z['escaped']['w'],
                                                                  z['visibleEscaped']))
    # the keyboard
    check(z['tabStops'] == 1 and z['tabStopsAfterKeys'] == 1 and z['tabStopIsFocus'],
          '%s: the graph is one tab stop that follows the focus (%d, %d)' % (name, z['tabStops'], z['tabStopsAfterKeys']))
    ow = z['focusOutline'].split()
    check(ow[0] not in ('none', 'hidden') and float(ow[-1].rstrip('px') or 0) >= 2,
          '%s: a focused frame has a visible ring (%s)' % (name, z['focusOutline']))
    check(z['up'] == z['expectUp'] and z['up'] >= 0, '%s: ArrowUp goes to the caller (%d, want %d)' % (name, z['up'], z['expectUp']))
    kids = [i for i, f in enumerate(frames) if f['p'] == z['up']]
    check(bool(kids) and z['down'] == kids[0], '%s: ArrowDown goes to the heaviest callee (%d, want %s)'
          % (name, z['down'], kids[:1]))
    row = [i for i, f in enumerate(frames) if f['d'] == frames[z['down']]['d']] if z['down'] >= 0 else []
    after = [i for i in row if i > z['down']]
    check(z['right'] == (after[0] if after else z['down']) and z['left'] == z['down'],
          '%s: ArrowRight and ArrowLeft move along the row (%d, %d)' % (name, z['right'], z['left']))
    check(near(z['entered']['w'], gw) and z['visibleEntered'] == keep and z['focusedEntered'] == t,
          '%s: Enter zooms into the focused frame (%g px of %g)' % (name, z['entered']['w'], gw))
    check(near(z['enterEscaped']['w'], b['w'], 1) and z['visibleEnterEscaped'] == n,
          '%s: then Escape resets it (%g px)' % (name, z['enterEscaped']['w']))
    # the search
    check(z['slashFocused'], "%s: '/' focuses the search box" % name)
    low = z['needle'].lower()
    want = [i for i, f in enumerate(frames) if low and low in f['text'].lower()]
    check(bool(want) and z['matched'] == want, '%s: the search for %r highlights the %d frames holding it (%d)'
          % (name, z['needle'], len(want), len(z['matched'])))
    hit = set(want)
    def inside(i):
        a = frames[i]['p']
        while a >= 0:
            if a in hit:
                return True
            a = frames[a]['p']
        return False
    share = sum(frames[i]['t'] for i in want if not inside(i)) / z['total'] * 100 if z['total'] else 0
    m = re.match(r'(\d+) frames? match(?:es)?, ([0-9.]+)% of the time$', z['matchMessage'])
    check(bool(m) and int(m.group(1)) == len(want) and abs(float(m.group(2)) - share) <= 0.051,
          "%s: the search says '%s' (want %d frames, %.1f%%)" % (name, z['matchMessage'], len(want), share))
    check(z['matchBg'] == 'rgb(%d, %d, %d)' % PURPLE, '%s: found frames are drawn in purple (%s)' % (name, z['matchBg']))
    check(z['matchedAfterEscape'] == 0 and z['searchAfterEscape'] == '',
          '%s: Escape in the search box clears it' % name)
    check(not z['alerts'] and z['injected'] == 0 and z['scriptsAfter'] == z['scripts'],
          '%s: no script or element from the names ran or appeared (%s, %d, %d -> %d scripts)'
          % (name, z['alerts'], z['injected'], z['scripts'], z['scriptsAfter']))
    check_page_common(name, seen)

    # screenshots: the search typed, before and after a click on the target
    # (when the search finds the target: its purple is what is measured)
    if low not in frames[t]['text'].lower() or not narrow:
        print('# %s: no screenshot of the zoom (%s)' % (name, 'the search does not find the target' if narrow
                                                         else 'the target spans the graph already'))
        return z
    js_search = ('var q=document.querySelector(".fgw .fgq");q.value=%s;'
                 'q.dispatchEvent(new Event("input",{bubbles:true}));') % json.dumps(z['needle']).replace('<', '\\u003c')
    js_click = ('var f=document.querySelectorAll(".fgw .fg > div.f")[%d];'
                'f.dispatchEvent(new MouseEvent("click",{bubbles:true}));') % t
    height = z['graphY'] + z['graphHeight'] + 40
    before = with_script(page, js_search, os.path.join(shots, name + '-search.png'), height, width)
    zoomed = with_script(page, js_search + js_click, os.path.join(shots, name + '-zoomed.png'), height, width)
    # inside the row, clear of the focus ring the click leaves on the frame
    rowb = (z['graphX'], b['y'] + 4, gw, b['h'] - 8)
    rowa = (z['graphX'], c['y'] + 4, gw, c['h'] - 8)
    area = gw * (b['h'] - 8)
    pb, pa = colour_count(before, rowb, PURPLE, 30), colour_count(zoomed, rowa, PURPLE, 30)
    check(pb >= 0.5 * b['w'] * (b['h'] - 8) and pb < 0.75 * area,
          '%s: the search screenshot shows the target in purple at its width (%d px, %d..%d)'
          % (name, pb, 0.5 * b['w'] * (b['h'] - 8), 0.75 * area))
    check(pa >= 0.8 * area and pa > 1.2 * pb,
          '%s: after the click the screenshot shows it across the graph (%d px of %d, was %d)' % (name, pa, area, pb))
    return z


def colour_count(png, box, rgb, tol=40):
    """Pixels of PNG within BOX whose colour is within TOL of RGB."""
    w, h, bpp, rows = png
    x0, y0, bw, bh = (int(v) for v in box)
    n = 0
    for y in range(max(0, y0), min(h, y0 + bh)):
        row = rows[y]
        for x in range(max(0, x0), min(w, x0 + bw)):
            r, g, b = row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]
            if abs(r - rgb[0]) + abs(g - rgb[1]) + abs(b - rgb[2]) <= tol:
                n += 1
    return n


def check_runcharts(page, shots, phases, logged, process):
    """The timelines of a run page (site or `results open`): the phases'
    bands, the logged statistics' charts, the process tree's memory and
    CPU; drawn, and visible in a screenshot in the phases' colours."""
    name = os.path.basename(page)
    seen = probe(page, 'runcharts')
    figs = seen['runcharts']
    ph = [f for f in figs if f['cls'] == 'phases']
    check(len(ph) == 1, '%s: one phases chart (%d)' % (name, len(ph)))
    if ph:
        p = ph[0]
        check(p['bands'] == phases + 1, '%s: %d bands, one per phase and other (want %d)' % (name, p['bands'], phases + 1))
        check(p['width'] > 500 and p['height'] > 100, '%s: phases chart laid out %gx%g' % (name, p['width'], p['height']))
        check(sum(1 for a in p['bandAreas'] if a > 0) >= min(phases, 2), '%s: bands have area %s' % (name, p['bandAreas']))
    check(len(seen['legend']) == phases + 1, '%s: a legend key per band %s' % (name, seen['legend']))
    lg = [f for f in figs if f['cls'] == 'logged']
    check(len(lg) == logged, '%s: %d logged-stats charts (want %d: %s)' % (name, len(lg), logged, [f['caption'] for f in lg]))
    check(all(f['linePoints'] >= 2 for f in lg), '%s: every logged chart has a line' % name)
    pr = [f for f in figs if f['cls'] in ('rss', 'cores')]
    check(len(pr) == (2 if process else 0), '%s: process charts %s' % (name, [f['cls'] for f in pr]))
    check(all(f['linePoints'] >= 5 for f in pr), '%s: process charts have lines' % name)
    check_page_common(name, seen)
    png = screenshot(page, seen['scrollHeight'], os.path.join(shots, name + '-charts.png'))
    if ph:
        p = ph[0]
        box = (p['x'], p['y'], p['width'], p['height'])
        shown = 0
        for c in p['bandColours'][:-1]:
            rgb = tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))
            if colour_count(png, box, rgb) > 30:
                shown += 1
        check(shown >= min(phases, 2), '%s: the screenshot shows %d of the phases\' colours' % (name, shown))
    for f in lg[:1] + pr[:1]:
        st = pixel_stats(png, (f['x'], f['y'], f['width'], f['height']))
        check(st['blue'] > 50, '%s: the %s chart shows its line (%d px)' % (name, f['caption'], st['blue']))


def main(argv):
    if len(argv) < 4:
        print(__doc__.split('usage:')[1].split('Exits')[0], file=sys.stderr)
        return 2
    mode, target, shots = argv[1], argv[2], argv[3]
    os.makedirs(shots, exist_ok=True)
    if mode == 'trend' and len(argv) == 6:
        check_charts(target, shots, 'trend', int(argv[4]), int(argv[5]))
    elif mode == 'site' and len(argv) in (5, 6):
        runs = int(argv[4])
        index_page = os.path.join(target, 'index.html')
        seen = probe(index_page, 'index')
        ix = seen['index']
        check(ix['rows'] == runs, 'site: index lists %d runs (want %d)' % (ix['rows'], runs))
        check(ix['column'] >= 0, 'site: index has a duration column')
        asc, desc = ix['asc'], ix['desc']
        check(len(asc) == runs and all(asc[i - 1] <= asc[i] for i in range(1, len(asc))),
              'site: a header click sorts ascending %s' % asc)
        check(len(desc) == runs and all(desc[i - 1] >= desc[i] for i in range(1, len(desc))),
              'site: a second click sorts descending %s' % desc)
        check(asc != desc, 'site: the two clicks give different orders')
        check_page_common('site index', seen)
        png = screenshot(index_page, seen['scrollHeight'], os.path.join(shots, 'site-index.png'))
        full = pixel_stats(png)
        check(full['nonWhite'] > 0.01 * full['width'] * full['height'], 'site: index screenshot is not blank')

        # a run page: follow the first link, find the call tree, fold it
        href = ix['firstRunLink']
        check(bool(href) and os.path.isfile(os.path.join(target, href)), "site: the first run link '%s' resolves" % href)
        if href and os.path.isfile(os.path.join(target, href)):
            run_page = os.path.join(target, href)
            seen = probe(run_page, 'run')
            r = seen['run']
            check(r['details'] > 3, 'site: run page has an expandable call tree (%d <details>)' % r['details'])
            check(r['fnRows'] > 5, 'site: run page lists functions (%d)' % r['fnRows'])
            check(r['openBefore'] is True and r['openAfter'] is False, 'site: clicking a tree line folds it')
            check_page_common('site run page', seen)
            png = screenshot(run_page, seen['scrollHeight'], os.path.join(shots, 'site-run.png'))
            full = pixel_stats(png)
            check(full['nonWhite'] > 0.01 * full['width'] * full['height'], 'site: run page screenshot is not blank')

        seen = check_charts(os.path.join(target, 'trends.html'), shots, 'site-trends',
                            int(argv[5]) if len(argv) == 6 else 2, 0)
        link = seen['charts'][0]['firstLink'] if seen['charts'] else ''
        check(bool(link) and os.path.exists(os.path.join(target, link)),
              "site: chart points link to run pages ('%s')" % link)
    elif mode == 'flame' and len(argv) == 5:
        check_flame(target, shots, argv[4])
    elif mode == 'open' and len(argv) >= 5:
        check_open(target, shots, argv[4:])
    elif mode == 'zoom' and len(argv) in (5, 6):
        check_zoom(target, shots, os.path.basename(target), argv[4], argv[5] if len(argv) == 6 else None)
    elif mode == 'runcharts' and len(argv) == 7:
        check_runcharts(target, shots, int(argv[4]), int(argv[5]), int(argv[6]))
    else:
        print(__doc__.split('usage:')[1].split('Exits')[0], file=sys.stderr)
        return 2
    print('%d browser checks failed' % failures if failures else 'all browser checks passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
