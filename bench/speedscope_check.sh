#!/usr/bin/env bash
# speedscope_check.sh: does speedscope (https://www.speedscope.app, npm
# package `speedscope`) open the Chrome trace that `opprof exec --sample`
# writes?  A manual check, never part of the tests. It needs an npm registry,
# node and Debian's headless Chromium (/usr/bin/chromium), and a built tree.
#
# In a mktemp -d folder (removed at exit) it installs speedscope and
# playwright-core, records build/tests/s73 (main thread: work_a 70%, work_b
# 30%), serves the folder from node on 127.0.0.1, loads speedscope's release
# build with #profileURL=<the trace> in Chromium, and prints which importer
# speedscope chose, each profile's name (the toolbar title) and the total
# time speedscope gives work_a and work_b. Screenshots stay only if KEEP=DIR
# names a folder to copy them to.
#
#   bench/speedscope_check.sh
# speedscope reads a file's CPU profiles only when its first event has pid,
# tid, ph and cat; before opprof wrote "cat" on the samples' thread_name
# events, it showed "Successfully imported profile, but it's empty!".
# Exit status 0 when speedscope shows both work_a and work_b with work_a
# between 50% and 90% of their sum, 1 otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${OPPROF_BUILD:-$ROOT/build}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"

echo "== npm install speedscope playwright-core (in $T)"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent speedscope playwright-core >/dev/null
echo "speedscope $(node -p 'require("speedscope/package.json").version')"

echo "== opprof exec --sample --trace prof.json -- s73 20000"
"$BUILD/bin/opprof" exec --sample --trace "$T/prof.json" -- "$BUILD/tests/s73" 20000
cat >check.mjs <<'EOF'
import { chromium } from 'playwright-core';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
const [chromiumPath] = process.argv.slice(2);
const types = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json',
                '.css': 'text/css', '.wasm': 'application/wasm', '.png': 'image/png' };
const server = http.createServer((req, res) => {   // a static server for this folder
  const f = path.join(process.cwd(), decodeURIComponent(new URL(req.url, 'http://x').pathname));
  fs.readFile(f, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': types[path.extname(f)] || 'application/octet-stream' });
    res.end(data);
  });
});
await new Promise(r => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
const log = [];
page.on('console', m => { if (!/WebGL|GL Driver/.test(m.text())) log.push(`console.${m.type()}: ${m.text()}`); });
page.on('pageerror', e => log.push(`pageerror: ${e.message}`));
page.on('dialog', d => { log.push(`dialog: ${d.message()}`); d.dismiss(); });
await page.goto(`${base}/node_modules/speedscope/dist/release/index.html#profileURL=${encodeURIComponent(base + '/prof.json')}`);
await page.waitForTimeout(5000);
await page.screenshot({ path: 'timeorder.png' });
const loaded = await page.getByText('Sandwich').count() > 0;
const found = {};
if (loaded) {
  await page.getByText('Sandwich').first().click();
  const seen = new Set();
  for (let i = 0; i < 16; i++) {                      // n: speedscope's "next profile" key
    await page.waitForTimeout(1000);
    const text = await page.evaluate(() => document.body.innerText);
    const lines = text.split('\n').map(s => s.trim()).filter(Boolean);
    const title = lines[1];                           // the toolbar's profile name
    if (seen.has(title)) break;
    seen.add(title);
    await page.screenshot({ path: `sandwich${i}.png` });
    console.log(`profile: ${title}`);
    const rows = lines.slice(lines.indexOf('Total\tSelf\tSymbol Name') + 1);
    for (let r = 0; r + 2 < rows.length; r += 3) {   // total, self, name
      const m = rows[r].match(/^([\d.]+)(ns|µs|ms|s) \(/);
      const name = rows[r + 2];
      if (!m || !/^work_[ab]$/.test(name)) continue;
      const ms = parseFloat(m[1]) * { ns: 1e-6, 'µs': 1e-3, ms: 1, s: 1e3 }[m[2]];
      found[name] = (found[name] || 0) + ms;
      console.log(`  ${name}: ${rows[r]} total`);
    }
    await page.keyboard.press('n');
  }
} else {
  console.log('speedscope shows no profile (its welcome page is still up)');
}
console.log(log.map(s => `  [${s}]`).join('\n'));
await browser.close();
server.close();
const a = found.work_a || 0, b = found.work_b || 0;
if (!a || !b) { console.log(`FAIL: work_a ${a ? 'found' : 'missing'}, work_b ${b ? 'found' : 'missing'}`); process.exit(1); }
const share = a / (a + b);
console.log(`work_a:work_b = ${(100 * share).toFixed(1)}:${(100 - 100 * share).toFixed(1)} (expected about 70:30)`);
if (share < 0.5 || share > 0.9) { console.log('FAIL: the ratio is far from 70:30'); process.exit(1); }
console.log('OK: speedscope opened the trace and shows work_a and work_b');
EOF

echo "== speedscope in $CHROMIUM (headless)"
rc=0
node check.mjs "$CHROMIUM" || rc=$?
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp ./*.png prof.json "$KEEP"/ && echo "screenshots and trace copied to $KEEP"; fi
exit $rc
