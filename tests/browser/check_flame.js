// Render the differential flame graph of `results compare --deep --html`
// in headless Chromium (Debian's chromium through playwright-core) and
// check it as a reader sees it:
//   node check_flame.js <page.html> <shots-dir> <new-function-name>
// - the icicle is laid out: frames are boxes inside the graph, the root
//   row spans the whole width, no frame sticks out of its parent's row;
// - the new function's frame is drawn red, with the width of its share;
// - a screenshot of the graph shows red (the new subtree) and grey (the
//   unchanged callers), decoded with the browser's own PNG decoder;
// - no script errors, no network request.
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

async function main() {
  const [file, shots, newfn] = process.argv.slice(2);
  if (!file || !shots || !newfn) {
    console.error('usage: check_flame.js <page.html> <shots> <new-function>');
    process.exit(2);
  }
  fs.mkdirSync(shots, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'results-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1200, height: 900 },
  });
  const external = [], errors = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file://') || url.startsWith('data:')) return route.continue();
    external.push(url);
    return route.abort();
  });
  try {
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    const graph = page.locator('div.fg');
    const gbox = await graph.boundingBox();
    check(gbox && gbox.width > 1000 && gbox.height > 100, `graph laid out (${gbox && gbox.width}x${gbox && gbox.height})`);
    const frames = await page.$$eval('div.fg > div.f', (els) => els.map((e) => {
      const r = e.getBoundingClientRect();
      const bg = getComputedStyle(e).backgroundColor;
      return { x: r.x, y: r.y, w: r.width, h: r.height, text: e.textContent, cls: e.className, bg };
    }));
    check(frames.length > 50, `${frames.length} frames drawn`);
    const root = frames.filter((f) => Math.abs(f.y - gbox.y - 1) < 2);
    check(root.length >= 1 && root[0].w > 0.9 * gbox.width, `the root row spans the graph (${root.length && root[0].w})`);
    const inside = frames.every((f) => f.x >= gbox.x - 1 && f.x + f.w <= gbox.x + gbox.width + 1);
    check(inside, 'every frame lies inside the graph');
    const nf = frames.filter((f) => f.text.startsWith(newfn + ' '));
    check(nf.length === 1 && nf[0].cls.includes('new') && nf[0].bg === 'rgb(207, 34, 46)',
          `the new function ${newfn} is one red frame (${nf.length && nf[0].bg})`);
    check(nf.length === 1 && nf[0].w > 0.05 * gbox.width && nf[0].w < 0.2 * gbox.width,
          `its width is its share of the run (${nf.length && (nf[0].w / gbox.width).toFixed(3)})`);
    const png = await graph.screenshot({ path: path.join(shots, 'flame.png') });
    const st = await page.evaluate(async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      let red = 0, grey = 0;
      for (let i = 0; i < d.length; i += 4) {
        const r = d[i], gg = d[i + 1], b = d[i + 2];
        if (r > 180 && gg < 80 && b < 90) red++;
        if (Math.abs(r - gg) < 8 && Math.abs(gg - b) < 8 && r > 200 && r < 245) grey++;
      }
      return { width: c.width, height: c.height, red, grey };
    }, 'data:image/png;base64,' + png.toString('base64'));
    check(st.red > 0.01 * st.width * st.height, `screenshot shows the new subtree in red (${st.red} px)`);
    check(st.grey > 0.05 * st.width * st.height, `screenshot shows the unchanged callers in grey (${st.grey} px)`);
    check(errors.length === 0, 'no script errors ' + errors.join('; '));
    check(external.length === 0, 'no network requests ' + external.join(' '));
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(failures ? `${failures} browser checks failed` : 'all browser checks passed');
  process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.error('FAIL: ' + (e && e.stack || e)); process.exit(1); });
