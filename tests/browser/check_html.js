#!/usr/bin/env node
// Headless Chromium checks of the pages that `results trend --html` and
// `results site` write. Uses Debian's chromium through playwright-core
// (no browser download). Every request that is not file:// is refused and
// counted: the pages must be self-contained.
//
// usage:
//   node check_html.js trend <page.html> <shots-dir> <min-charts> <min-change-points>
//   node check_html.js site  <site-dir>  <shots-dir> <runs>
// Exits 0 when every check passes, 1 otherwise (messages on stderr).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
              '--disable-component-update', '--disable-sync', '--no-first-run'];

let failures = 0;
function check(cond, what) {
  if (cond) {
    console.log('ok - ' + what);
  } else {
    console.error('FAIL: ' + what);
    failures++;
  }
}

// Count the pixels of a PNG screenshot by colour class, decoding it with
// the browser's own PNG decoder (no image library needed).
async function pixelStats(page, png) {
  const url = 'data:image/png;base64,' + png.toString('base64');
  return page.evaluate(async (src) => {
    const img = new Image();
    img.src = src;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let nonWhite = 0, blue = 0, red = 0;
    for (let i = 0; i < d.length; i += 4) {
      const r = d[i], gg = d[i + 1], b = d[i + 2];
      if (r < 245 || gg < 245 || b < 245) nonWhite++;
      if (b > 150 && r < 80 && gg > 60 && gg < 150) blue++;      // #0969da line and points
      if (r > 150 && gg < 90 && b < 90) red++;                   // #cf222e change points
    }
    return { width: c.width, height: c.height, nonWhite, blue, red };
  }, url);
}

async function openPage(context, file, external) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
  page._errors = errors;
  return page;
}

async function checkCharts(page, shots, name, minCharts, minChangePoints) {
  const info = await page.evaluate(() => {
    const figs = Array.from(document.querySelectorAll('figure.chart'));
    return figs.map((f) => {
      const svg = f.querySelector('svg');
      const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
      const line = svg && svg.querySelector('path.line');
      return {
        series: f.dataset.series,
        width: box.width, height: box.height,
        path: line ? line.getAttribute('d').length : 0,
        points: svg ? svg.querySelectorAll('circle.pt').length : 0,
        links: svg ? svg.querySelectorAll('a[href]').length : 0,
        cps: svg ? svg.querySelectorAll('line.cp').length : 0,
      };
    });
  });
  check(info.length >= minCharts, `${name}: ${info.length} charts (want >= ${minCharts})`);
  check(info.every((c) => c.width > 200 && c.height > 100), `${name}: every chart is laid out with a size`);
  check(info.every((c) => c.path > 10 && c.points > 0), `${name}: every chart has a line and points`);
  check(info.every((c) => c.links === c.points), `${name}: every point links to its run`);
  const cps = info.reduce((a, c) => a + c.cps, 0);
  check(cps >= minChangePoints, `${name}: ${cps} change points marked (want >= ${minChangePoints})`);

  // The screenshot check: the first chart, as rendered, must show the
  // line in its colour, and the page must not be blank.
  const first = page.locator('figure.chart svg').first();
  const png = await first.screenshot({ path: path.join(shots, name + '-chart.png') });
  const st = await pixelStats(page, png);
  check(st.width > 200 && st.height > 100, `${name}: chart screenshot ${st.width}x${st.height}`);
  check(st.blue > 200, `${name}: chart screenshot shows the series line (${st.blue} line pixels)`);
  check(st.nonWhite > 0.01 * st.width * st.height, `${name}: chart screenshot is not blank (${st.nonWhite} non-white pixels)`);
  if (minChangePoints > 0) {
    // the chart holding a change point shows it in red
    const withCp = page.locator('figure.chart[data-change-points]:not([data-change-points="0"]) svg').first();
    const st2 = await pixelStats(page, await withCp.screenshot({ path: path.join(shots, name + '-change-point.png') }));
    check(st2.red > 30, `${name}: a change point is drawn (${st2.red} red pixels)`);
  }
  const full = await page.screenshot({ path: path.join(shots, name + '-page.png'), fullPage: true });
  const fs2 = await pixelStats(page, full);
  check(fs2.nonWhite > 0.01 * fs2.width * fs2.height, `${name}: full-page screenshot is not blank`);
}

async function main() {
  const [mode, target, shots, a, b] = process.argv.slice(2);
  if (!mode || !target || !shots) {
    console.error('usage: check_html.js trend <page.html> <shots> <min-charts> <min-cps> | site <dir> <shots> <runs>');
    process.exit(2);
  }
  fs.mkdirSync(shots, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'results-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1000, height: 800 },
  });
  const external = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file://') || url.startsWith('data:')) return route.continue();
    external.push(url);
    return route.abort();
  });
  try {
    if (mode === 'trend') {
      const page = await openPage(context, target, external);
      await checkCharts(page, shots, 'trend', parseInt(a, 10), parseInt(b, 10));
      check(page._errors.length === 0, 'trend: no script errors ' + page._errors.join('; '));
    } else if (mode === 'site') {
      const runs = parseInt(a, 10);
      const index = await openPage(context, path.join(target, 'index.html'), external);
      const rows = await index.locator('#runs tbody tr').count();
      check(rows === runs, `site: index lists ${rows} runs (want ${runs})`);
      // sortable: click "duration" twice, the column comes out ascending then descending
      const col = await index.evaluate(() =>
        Array.from(document.querySelectorAll('#runs thead th')).findIndex((th) => th.textContent === 'duration'));
      const values = () => index.evaluate((i) =>
        Array.from(document.querySelectorAll('#runs tbody tr')).map((r) => parseFloat(r.cells[i].dataset.v)), col);
      await index.locator('#runs thead th').nth(col).click();
      const asc = await values();
      await index.locator('#runs thead th').nth(col).click();
      const desc = await values();
      check(asc.every((v, i) => i === 0 || asc[i - 1] <= v), 'site: a header click sorts ascending');
      check(desc.every((v, i) => i === 0 || desc[i - 1] >= v), 'site: a second click sorts descending');
      await index.screenshot({ path: path.join(shots, 'site-index.png'), fullPage: true });
      check(index._errors.length === 0, 'site: index has no script errors ' + index._errors.join('; '));

      // a run page: follow the first link, find the call tree, fold it
      const href = await index.locator('#runs tbody tr a').first().getAttribute('href');
      const run = await openPage(context, path.join(target, href), external);
      const details = await run.locator('details').count();
      check(details > 3, `site: run page has an expandable call tree (${details} <details>)`);
      const fnRows = await run.locator('h2:has-text("Functions") + table tbody tr').count();
      check(fnRows > 5, `site: run page lists functions (${fnRows})`);
      const firstOpen = () => run.evaluate(() => document.querySelector('.tree details').open);
      const before = await firstOpen();
      await run.locator('.tree details > summary').first().click();
      check(before === true && (await firstOpen()) === false, 'site: clicking a tree line folds it');
      await run.screenshot({ path: path.join(shots, 'site-run.png'), fullPage: true });
      check(run._errors.length === 0, 'site: run page has no script errors ' + run._errors.join('; '));

      const trends = await openPage(context, path.join(target, 'trends.html'), external);
      await checkCharts(trends, shots, 'site-trends', parseInt(b || '2', 10), 0);
      const link = await trends.locator('figure.chart a').first().getAttribute('href');
      check(fs.existsSync(path.join(target, link)), `site: chart points link to run pages (${link})`);
    } else {
      console.error('unknown mode ' + mode);
      process.exit(2);
    }
    check(external.length === 0, 'no network requests ' + external.join(' '));
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(failures ? `${failures} browser checks failed` : 'all browser checks passed');
  process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.error('FAIL: ' + (e && e.stack || e)); process.exit(1); });
