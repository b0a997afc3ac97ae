// Opens pages in headless Chromium (playwright-core, the Debian chromium)
// and reports what each page's script left in window.result: the
// TypeScript SDK's Client over Streamable HTTP, run by the page against the
// gateway, from the page's own origin (cors_e2e_test.go).
//
// node browser.mjs CHROMIUM URL...
// Prints one JSON line: {"pages":[result per URL]} or {"error": ...}.
import { launch } from "./chromium.mjs";

const [executablePath, ...urls] = process.argv.slice(2);
let browser;
try {
  browser = await launch(executablePath);
  const pages = [];
  for (const url of urls) {
    const page = await (await browser.newContext()).newPage();
    const console = [];
    page.on("console", (m) => console.push(m.text()));
    await page.goto(url);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60000 });
    pages.push({ ...(await page.evaluate(() => window.result)), console });
  }
  process.stdout.write(JSON.stringify({ pages }) + "\n");
} catch (e) {
  process.stdout.write(JSON.stringify({ error: String(e?.stack ?? e) }) + "\n");
} finally {
  await browser?.close();
}
