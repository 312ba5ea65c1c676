// Injected by check_html.py into a copy of a page under test, after the
// page's own markup and scripts, and run on the load event. It measures
// and exercises the page as rendered by headless Chromium, then writes
// its findings as JSON into a hidden pre#rs-probe, which `chromium
// --dump-dom` prints. The checks themselves (thresholds, messages) are in
// check_html.py; this only observes. window.RS_PROBE names what to look
// at: "charts", "index", "run", "flame", "open" or "zoom". check_html.py's HEAD, injected first in
// <head>, collected script errors and refused requests.
(function () {
  'use strict';
  function charts() {
    return Array.from(document.querySelectorAll('figure.chart')).map(function (f) {
      var svg = f.querySelector('svg');
      var box = svg ? svg.getBoundingClientRect() : { left: 0, top: 0, width: 0, height: 0 };
      var line = svg && svg.querySelector('path.line');
      return {
        series: f.dataset.series || '',
        changePointsAttr: f.dataset.changePoints || '',
        // document coordinates, to crop the chart out of a full-page screenshot
        x: box.left + window.scrollX, y: box.top + window.scrollY,
        width: box.width, height: box.height,
        path: line ? line.getAttribute('d').length : 0,
        points: svg ? svg.querySelectorAll('circle.pt').length : 0,
        links: svg ? svg.querySelectorAll('a[href]').length : 0,
        cps: svg ? svg.querySelectorAll('line.cp').length : 0,
        firstLink: (f.querySelector('a[href]') || { getAttribute: function () { return ''; } }).getAttribute('href'),
      };
    });
  }

  function index() {
    var rows = document.querySelectorAll('#runs tbody tr');
    var ths = Array.from(document.querySelectorAll('#runs thead th'));
    var col = ths.findIndex(function (th) { return th.textContent === 'duration'; });
    var values = function () {
      return Array.from(document.querySelectorAll('#runs tbody tr')).map(function (r) {
        return parseFloat(r.cells[col].dataset.v);
      });
    };
    var before = col >= 0 ? values() : [];
    var asc = [], desc = [];
    if (col >= 0) {
      ths[col].click();           // the page's own handler sorts
      asc = values();
      ths[col].click();
      desc = values();
    }
    var first = document.querySelector('#runs tbody tr a');
    return { rows: rows.length, column: col, before: before, asc: asc, desc: desc,
             firstRunLink: first ? first.getAttribute('href') : '' };
  }

  function run() {
    var details = document.querySelectorAll('details').length;
    var h2 = Array.from(document.querySelectorAll('h2')).find(function (h) {
      return h.textContent.indexOf('Functions') >= 0;
    });
    var table = h2 && h2.nextElementSibling;
    var fnRows = table && table.tagName === 'TABLE' ? table.querySelectorAll('tbody tr').length : 0;
    var d = document.querySelector('.tree details');
    var summary = document.querySelector('.tree details > summary');
    var openBefore = d ? d.open : null;
    if (summary) summary.click(); // a click on the line toggles <details>
    return { details: details, fnRows: fnRows, openBefore: openBefore, openAfter: d ? d.open : null };
  }

  // the differential flame graph (and the frames of any div.fg): every
  // frame's box and computed colour, in document coordinates
  function flame() {
    var g = document.querySelector('div.fg');
    var box = g ? g.getBoundingClientRect() : { left: 0, top: 0, width: 0, height: 0 };
    var frames = g ? Array.from(g.querySelectorAll(':scope > div.f')).map(function (e) {
      var r = e.getBoundingClientRect();
      return { x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height,
               text: e.textContent, cls: e.className, bg: getComputedStyle(e).backgroundColor };
    }) : [];
    return { graph: { x: box.left + window.scrollX, y: box.top + window.scrollY,
                      width: box.width, height: box.height,
                      clientLeft: g ? g.clientLeft : 0, clientTop: g ? g.clientTop : 0 },
             frames: frames };
  }

  // the call tree of `results open`: frames, order, folding by clicks
  function open() {
    var tree = document.querySelector('div.tree');
    var all = tree ? Array.from(tree.querySelectorAll('details')) : [];
    var top = tree ? Array.from(tree.children) : [];
    var name = function (el) {
      var n = el.querySelector('.n');
      return n ? n.textContent : '';
    };
    // every frame's children in order of total time, heaviest first
    var sorted = all.every(function (d) {
      var t = Array.from(d.children).filter(function (c) { return c.dataset.t !== undefined; })
        .map(function (c) { return parseFloat(c.dataset.t); });
      return t.every(function (v, i) { return i === 0 || t[i - 1] >= v; });
    });
    var firstClosed = all.find(function (d) { return !d.open; });
    var before = firstClosed ? firstClosed.open : null;
    var rows = tree ? tree.getBoundingClientRect() : { width: 0, height: 0 };
    var initial = all.map(function (d) { return d.open; });
    // a folded line is one line high; unfolded, its children show below it
    var visibleBefore = firstClosed ? firstClosed.getBoundingClientRect().height : -1;
    if (firstClosed) firstClosed.querySelector('summary').click();
    var after = firstClosed ? firstClosed.open : null;
    var visibleAfter = firstClosed ? firstClosed.getBoundingClientRect().height : -1;
    var collapse = document.getElementById('collapse'), expand = document.getElementById('expand');
    if (collapse) collapse.click();
    var openAfterCollapse = all.filter(function (d) { return d.open; }).length;
    if (expand) expand.click();
    var openAfterExpand = all.filter(function (d) { return d.open; }).length;
    all.forEach(function (d, i) { d.open = initial[i]; });  // as it was, for the screenshot
    return {
      details: all.length, leaves: tree ? tree.querySelectorAll('.leaf').length : 0,
      topNames: top.map(name), secondNames: top[0] ? Array.from(top[0].children).slice(1, 6).map(name) : [],
      hot: tree ? tree.querySelectorAll('.hot').length : 0, sorted: sorted,
      clickedName: firstClosed ? name(firstClosed) : '', openBefore: before, openAfter: after,
      childHeightBefore: visibleBefore, childHeightAfter: visibleAfter,
      width: rows.width, height: rows.height,
      openAfterCollapse: openAfterCollapse, openAfterExpand: openAfterExpand,
      text: tree ? tree.textContent.slice(0, 20000) : '',
    };
  }

  // the interactive flame graph (analysis/flame.c): zoom by click, by
  // keyboard, Escape, search, '/', roving tabindex, accessible names.
  // Real events are dispatched at the elements and go through the page's
  // own handlers; what they did is measured from the laid-out boxes.
  function zoom() {
    var fg = document.querySelector('.fgw .fg');
    if (!fg) return { graph: false };
    var q = document.querySelector('.fgw .fgq'), msg = document.querySelector('.fgw .fgm');
    var frames = Array.from(fg.querySelectorAll(':scope > div.f'));
    var gr = fg.getBoundingClientRect(), gw = fg.clientWidth, gx = gr.left + fg.clientLeft;
    var box = function (e) {
      var r = e.getBoundingClientRect();
      return { x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height,
               left: r.left - gx, top: r.top - fg.getBoundingClientRect().top,
               shown: getComputedStyle(e).display !== 'none' };
    };
    var visible = function () { return frames.filter(function (e) { return box(e).shown; }).length; };
    var index = function (e) { return e ? frames.indexOf(e) : -1; };
    var key = function (el, k) {
      el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
    };
    var want = window.RS_TARGET || '';
    var target = frames.find(function (e) {
      if (want) return e.textContent.indexOf(want) >= 0;
      var w = parseFloat(e.getAttribute('data-w'));
      return parseInt(e.getAttribute('data-d'), 10) >= 2 && w >= 0.05 && w <= 0.6;
    });
    var out = { graph: true, graphWidth: gw, graphX: gx + window.scrollX, graphY: gr.top + window.scrollY,
                graphHeight: gr.height, n: frames.length, scripts: document.scripts.length,
                total: parseFloat(fg.getAttribute('data-total')) || 0,
                frames: frames.map(function (e) {
                  return { text: e.textContent, t: parseFloat(e.getAttribute('data-t')),
                           p: parseInt(e.getAttribute('data-p'), 10), d: parseInt(e.getAttribute('data-d'), 10),
                           role: e.getAttribute('role') || '', label: e.getAttribute('aria-label') || '',
                           tab: e.tabIndex };
                }),
                treeRole: fg.getAttribute('role') || '', target: index(target) };
    if (!target) return out;
    var tp = parseInt(target.getAttribute('data-p'), 10);
    out.before = box(target);
    out.visibleBefore = visible();
    // 1. a click zooms into the frame: it fills the graph, its subtree
    //    inside it, its callers above it at full width, the rest hidden
    target.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, view: window }));
    out.clicked = box(target);
    out.visibleClicked = visible();
    out.focusedClicked = index(document.activeElement);
    var td = parseInt(target.getAttribute('data-d'), 10), ti = out.target;
    out.outside = frames.filter(function (e, i) {
      var b = box(e);
      if (!b.shown) return false;
      var d = parseInt(e.getAttribute('data-d'), 10);
      if (d < td) return b.w < gw - 1.5;                           // a caller not at full width
      if (d === td) return i !== ti;                               // another frame in its row
      return b.left < out.clicked.left - 0.5 || b.left + b.w > out.clicked.left + out.clicked.w + 0.5;
    }).map(function (e) { return e.textContent; }).slice(0, 5);
    out.path = Array.from(document.querySelectorAll('.fgw .fgpath button')).map(function (b) { return b.textContent; });
    // the zoom path's first button ("all") goes back
    var all = document.querySelector('.fgw .fgpath button');
    if (all) all.click();
    out.afterAll = box(target);
    out.visibleAfterAll = visible();
    // 2. zoom again, then Escape resets
    target.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, view: window }));
    out.reclicked = box(target);
    key(target, 'Escape');
    out.escaped = box(target);
    out.visibleEscaped = visible();
    // 3. the keyboard: one tab stop; up to the caller, down to its
    //    heaviest callee, left/right in the row; Enter zooms, Escape resets
    out.tabStops = frames.filter(function (e) { return e.tabIndex === 0; }).length;
    target.focus();
    out.focusOutline = getComputedStyle(target).outlineStyle + ' ' + getComputedStyle(target).outlineWidth;
    key(target, 'ArrowUp');
    out.up = index(document.activeElement);
    key(document.activeElement, 'ArrowDown');
    out.down = index(document.activeElement);
    var downEl = document.activeElement;
    key(downEl, 'ArrowRight');
    out.right = index(document.activeElement);
    key(document.activeElement, 'ArrowLeft');
    out.left = index(document.activeElement);
    out.tabStopsAfterKeys = frames.filter(function (e) { return e.tabIndex === 0; }).length;
    out.tabStopIsFocus = document.activeElement.tabIndex === 0;
    target.focus();
    key(target, 'Enter');
    out.entered = box(target);
    out.visibleEntered = visible();
    out.focusedEntered = index(document.activeElement);
    key(document.activeElement, 'Escape');
    out.enterEscaped = box(target);
    out.visibleEnterEscaped = visible();
    out.expectUp = tp;
    // 4. '/' focuses the search box; typing a needle highlights the frames
    key(document.body, '/');
    out.slashFocused = document.activeElement === q;
    var needle = window.RS_NEEDLE || target.getAttribute('data-name') || '';
    q.value = needle;
    q.dispatchEvent(new Event('input', { bubbles: true }));
    out.needle = needle;
    out.matched = frames.map(function (e, i) { return e.classList.contains('match') ? i : -1; })
      .filter(function (i) { return i >= 0; });
    out.matchMessage = msg ? msg.textContent : '';
    out.matchBg = out.matched.length ? getComputedStyle(frames[out.matched[0]]).backgroundColor : '';
    key(q, 'Escape');
    out.matchedAfterEscape = fg.querySelectorAll('.match').length;
    out.searchAfterEscape = q.value;
    out.scriptsAfter = document.scripts.length;
    out.alerts = window.__rsAlerts || [];
    out.injected = document.querySelectorAll('img,iframe,object,embed').length;
    return out;
  }

  // the run page's timelines (analysis/runcharts.c): each figure's box and marks
  function runcharts() {
    return Array.from(document.querySelectorAll('figure.chart')).map(function (f) {
      var svg = f.querySelector('svg');
      var r = svg ? svg.getBoundingClientRect() : { x: 0, y: 0, width: 0, height: 0 };
      var bands = svg ? Array.from(svg.querySelectorAll('polygon.band')) : [];
      var line = svg && svg.querySelector('polyline.series');
      return {
        cls: f.className.replace('chart', '').trim(),
        caption: (f.querySelector('figcaption') || { textContent: '' }).textContent,
        x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width, height: r.height,
        bands: bands.length,
        bandColours: bands.map(function (b) { return b.getAttribute('fill'); }),
        bandAreas: bands.map(function (b) { var bb = b.getBBox(); return bb.width * bb.height; }),
        linePoints: line ? line.points.numberOfItems : 0,
      };
    });
  }

  function report() {
    var out = { mode: window.RS_PROBE, errors: window.__rsErrors || [], external: [] };
    performance.getEntriesByType('resource').forEach(function (e) {
      if (!/^(file|data|blob):/.test(e.name)) out.external.push(e.name);
    });
    (window.__rsRefused || []).forEach(function (u) { out.external.push(u); });
    try {
      if (window.RS_PROBE === 'charts') out.charts = charts();
      else if (window.RS_PROBE === 'index') out.index = index();
      else if (window.RS_PROBE === 'run') out.run = run();
      else if (window.RS_PROBE === 'flame') out.flame = flame();
      else if (window.RS_PROBE === 'open') out.open = open();
      else if (window.RS_PROBE === 'zoom') out.zoom = zoom();
      else if (window.RS_PROBE === 'runcharts') {
        out.runcharts = runcharts();
        out.legend = Array.from(document.querySelectorAll('.legend .key')).map(function (k) { return k.textContent; });
        out.scripts = document.querySelectorAll('script').length;
        out.headings = Array.from(document.querySelectorAll('h2')).map(function (h) { return h.textContent; });
      }
    } catch (e) {
      out.errors.push('probe: ' + e);
    }
    out.scrollWidth = document.documentElement.scrollWidth;
    out.scrollHeight = document.documentElement.scrollHeight;
    var pre = document.createElement('pre');
    pre.id = 'rs-probe';
    pre.hidden = true;
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  // after every load handler of the page itself
  window.addEventListener('load', function () { setTimeout(report, 0); });
})();
