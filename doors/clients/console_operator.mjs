// Opens the web console's operator view in headless Chromium (Debian's,
// driven by playwright-core) on a server without a token, waits for its
// pools and for what the history parts say, and prints one JSON report.
// Usage: node console_operator.mjs BASE_URL
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'paddock-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const report = { consoleErrors: [] };
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.on('console', (m) => {
    process.stderr.write(`browser: ${m.type()}: ${m.text()}\n`);
    if (m.type() === 'error') report.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => report.consoleErrors.push(`page error: ${e.message}`));
  // The waits below end on events; their timeouts are only safety nets.
  page.setDefaultTimeout(180000);
  await page.goto(`${base}/console/#operator`);
  await page.waitForSelector('#op-pools tr[data-template="python"]');
  await page.waitForSelector('#op-runs-error:not([hidden])');
  await page.waitForSelector('#op-aggregates-error:not([hidden])');
  await page.waitForFunction(() => document.getElementById('op-viewer').textContent !== '');
  report.pools = await page.$$eval('#op-pools tr[data-template]', (trs) => trs.map((tr) => tr.dataset.template));
  report.runsNote = await page.textContent('#op-runs-error');
  report.aggregatesNote = await page.textContent('#op-aggregates-error');
  report.viewer = await page.textContent('#op-viewer');
  report.banner = await page.$eval('#auth-message', (e) => (e.hidden ? '' : e.textContent));
  report.requestError = await page.$eval('#op-error', (e) => (e.hidden ? '' : e.textContent));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(report) + '\n');
