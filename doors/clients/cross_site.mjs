// Opens PAGE_URL in headless Chromium (Debian's, driven by playwright-core)
// and waits until the page's script says its requests have settled
// (window.crossSiteDone). The page is another origin's: it posts runs to
// Paddock the way any web page could. Prints the page's report as JSON.
// Usage: node cross_site.mjs PAGE_URL
import { chromium } from 'playwright-core';

const [page_url] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  page.on('console', (m) => process.stderr.write(`browser: ${m.text()}\n`));
  // The wait ends on the page's own event; the timeout is only a safety net.
  page.setDefaultTimeout(180000);
  await page.goto(page_url);
  await page.waitForFunction(() => window.crossSiteDone === true);
  process.stdout.write(JSON.stringify(await page.evaluate(() => window.crossSiteReport)) + '\n');
} finally {
  await browser.close();
}
