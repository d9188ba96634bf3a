// Drives Paddock's web console (/console/) in headless Chromium (Debian's,
// driven by playwright-core): token entry (none, a bad one, a good one),
// the playground, the notebook and the operator view. Prints one JSON
// report; saves a screenshot of each view into OUTDIR.
// Usage: node console_browser.mjs BASE_URL TOKEN OUTDIR
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, token, outDir] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'paddock-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const report = { consoleErrors: [], requests: [] };
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.on('console', (m) => {
    process.stderr.write(`browser: ${m.type()}: ${m.text()}\n`);
    // The 401s and the 400 below are asked for; an HTML output's inline
    // styles are refused by the console's policy, which its frames inherit.
    if (m.type() !== 'error' || /status of 40[01]/.test(m.text())) return;
    if (/Content Security Policy directive 'style-src/.test(m.text())) report.blockedStyles = (report.blockedStyles || 0) + 1;
    else report.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => report.consoleErrors.push(`page error: ${e.message}`));
  // Every request the page makes, to show none leaves the server.
  page.on('request', (r) => report.requests.push(new URL(r.url()).origin));
  // The waits below end on events; their timeouts are only safety nets.
  page.setDefaultTimeout(180000);

  const shotWhole = async (path) => {
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 1280, height });
    await page.screenshot({ path });
    await page.setViewportSize({ width: 1280, height: 900 });
  };
  const banner = async () => page.$eval('#auth-message', (e) => (e.hidden ? '' : e.textContent));
  await page.goto(`${base}/console`);
  report.url = page.url();
  await page.waitForSelector('body[data-templates="failed"]');
  report.noToken = await banner();

  await page.fill('#token', 'not-a-token');
  await page.click('#token-save');
  await page.waitForFunction(() => /refused this token/.test(document.getElementById('auth-message').textContent));
  report.badToken = await banner();

  await page.fill('#token', token);
  await page.click('#token-save');
  await page.waitForSelector('body[data-templates="loaded"]');
  report.goodToken = await banner();
  report.templates = await page.$$eval('#pg-template option', (os) => os.map((o) => o.value));

  // Playground: a print, then a program that prints and plots.
  const runOnce = async (code, outputs) => {
    await page.selectOption('#pg-template', 'python');
    await page.fill('#pg-code', code);
    await page.fill('#pg-outputs', outputs);
    await page.click('#pg-run');
    await page.waitForSelector('#pg-run:not([disabled])');
    await page.waitForSelector('#pg-result:not([hidden])');
    return page.evaluate(() => ({
      stdout: document.getElementById('pg-stdout').textContent,
      stderr: document.getElementById('pg-stderr').textContent,
      reason: document.getElementById('pg-reason').textContent,
      exit: document.getElementById('pg-exit').textContent,
      timing: Object.fromEntries([...document.querySelectorAll('#pg-timing td')].map((td) => [td.dataset.phase, td.textContent])),
      images: [...document.querySelectorAll('#pg-files img')].map((i) => ({ src: i.src.slice(0, 22), width: i.naturalWidth })),
    }));
  };
  report.print = await runOnce('print(6*7)', '');
  report.plot = await runOnce("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n" +
    "plt.plot([1, 2, 3], [1, 4, 9])\nplt.savefig('plot.png')\nprint('plotted')", '*.png');
  await page.waitForFunction(() => [...document.querySelectorAll('#pg-files img')].every((i) => i.complete && i.naturalWidth > 0));
  report.plot.images = await page.$$eval('#pg-files img', (is) => is.map((i) => ({ src: i.src.slice(0, 22), width: i.naturalWidth })));
  await shotWhole(join(outDir, 'playground.png'));

  // A run the server refuses shows its error verbatim.
  await page.fill('#pg-code', 'print(1)');
  await page.fill('#pg-outputs', '../x');
  await page.click('#pg-run');
  await page.waitForSelector('#pg-error:not([hidden])');
  report.refused = await page.textContent('#pg-error');
  await page.fill('#pg-outputs', '');

  // Notebook.
  await page.click('#nav-notebook');
  await page.selectOption('#nb-template', 'python');
  await page.click('#nb-open');
  await page.waitForSelector('#nb-session[data-id]');
  report.sessionId = await page.getAttribute('#nb-session', 'data-id');
  const cell = async (i, code) => {
    const c = page.locator('#nb-cells .cell').nth(i);
    await c.locator('textarea').fill(code);
    await c.locator('.cell-run').click();
    await page.waitForFunction((n) => document.querySelectorAll('#nb-cells .cell')[n]?.dataset.status, i);
    return c;
  };
  await cell(0, 'x = 41');
  const sum = await cell(1, 'x + 1');
  report.sum = await sum.locator('.result.main pre').textContent();
  report.sumPrompt = await sum.locator('.cell-in .prompt').textContent();
  const html = await cell(2, "from IPython.display import HTML\nHTML('<b>hi</b>')");
  const frame = html.locator('iframe.html-output');
  report.blockedStylesBefore = report.blockedStyles || 0;
  report.html = {
    sandbox: await frame.getAttribute('sandbox'),
    srcdoc: await frame.getAttribute('srcdoc'),
    bold: await (await (await frame.elementHandle()).contentFrame()).textContent('b'),
    // Nothing of the output was parsed into the console's own page.
    inPage: await page.evaluate(() => document.querySelectorAll('#nb-cells b').length),
  };
  const table = await cell(3, "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3, 4]})");
  report.tableCells = await (await (await table.locator('iframe.html-output').elementHandle()).contentFrame()).$$eval('td', (tds) => tds.map((td) => td.textContent));
  const plot = await cell(4, 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()');
  await page.waitForFunction((el) => [...el.querySelectorAll('img')].some((i) => i.complete && i.naturalWidth > 0), await plot.elementHandle());
  report.plotImage = await plot.locator('img').first().evaluate((i) => ({ src: i.src.slice(0, 22), width: i.naturalWidth }));
  const err = await cell(5, '1/0');
  report.error = { status: await err.getAttribute('data-status'), name: await err.locator('.traceback strong').textContent(),
    traceback: await err.locator('.traceback pre').textContent() };
  // A full-page capture leaves some sandboxed frames blank in headless
  // Chromium: the viewport is made the page's height instead.
  await shotWhole(join(outDir, 'notebook.png'));
  await page.click('#nb-close');
  await page.waitForSelector('#nb-session:not([data-id])');
  report.closed = await page.textContent('#nb-session');

  // Operator: the pools, and the runs just made once the history has them.
  await page.click('#nav-operator');
  await page.waitForSelector('#op-pools tr[data-template="python"]');
  report.pools = await page.$$eval('#op-pools tr[data-template]', (trs) => trs.map((tr) => ({
    template: tr.dataset.template, ready: tr.querySelector('[data-col="ready"]').textContent,
    image: tr.querySelector('[data-col="image"]').textContent })));
  // Two runs and six cells.
  try {
    await page.waitForFunction(() => document.querySelectorAll('#op-runs tr[data-id]').length >= 8 &&
      document.querySelector('#op-chart g.bar[data-template="python"]') && document.querySelector('#op-scatter circle'));
  } catch (e) {
    process.stderr.write(`operator view: ${await page.textContent('#operator')}\n`);
    await page.screenshot({ path: join(outDir, 'operator-failed.png'), fullPage: true });
    throw e;
  }
  report.runs = await page.$$eval('#op-runs tr[data-id]', (trs) => trs.map((tr) => ({
    id: tr.dataset.id, ...Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.dataset.col, td.textContent])) })));
  report.bars = await page.$$eval('#op-chart g.bar', (gs) => gs.map((g) => `${g.dataset.template}/${g.dataset.startKind}`));
  report.viewer = await page.textContent('#op-viewer');
  report.operatorErrors = await page.$$eval('#operator .error:not([hidden]), #operator .note:not([hidden])', (es) => es.map((e) => e.textContent));
  await shotWhole(join(outDir, 'operator.png'));
  // Every tenant's runs need the admin scope this token lacks: the
  // server's refusal is shown.
  await page.check('#op-all');
  await page.waitForSelector('#op-runs-error:not([hidden])');
  report.allTenants = await page.textContent('#op-runs-error');
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
report.requests = [...new Set(report.requests)];
process.stdout.write(JSON.stringify(report) + '\n');
