// Opens a notebook of the classic Jupyter Notebook in headless Chromium
// (Debian's, driven by playwright-core), runs its cells and waits for the
// plot the first one draws. Prints one JSON report; saves a screenshot.
// Usage: node notebook_browser.mjs NOTEBOOK_URL TOKEN NOTEBOOK_PATH SCREENSHOT
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, token, path, screenshot] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'paddock-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const report = {};
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.on('console', (m) => process.stderr.write(`browser: ${m.text()}\n`));
  // The waits below end on events; their timeouts are only safety nets.
  page.setDefaultTimeout(180000);
  await page.goto(`${base}/notebooks/${path}?token=${token}`);
  await page.waitForFunction(() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel
    && Jupyter.notebook.kernel.is_connected() && Jupyter.notebook.kernel.info_reply
    && Jupyter.notebook.kernel.info_reply.protocol_version);
  report.kernelId = await page.evaluate(() => Jupyter.notebook.kernel.id);
  report.language = await page.evaluate(() => Jupyter.notebook.kernel.info_reply.language_info.name);
  await page.evaluate(() => Jupyter.notebook.execute_all_cells());
  const img = await page.waitForSelector('.output_png img');
  report.image = await img.evaluate((el) => ({ src: el.getAttribute('src').slice(0, 22), width: el.naturalWidth, height: el.naturalHeight }));
  await page.waitForFunction(() => Jupyter.notebook.get_cell(1).output_area.outputs.length > 0);
  report.text = await page.evaluate(() => Jupyter.notebook.get_cell(1).output_area.outputs[0].text);
  await page.screenshot({ path: screenshot, fullPage: true });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(report) + '\n');
