// What the tests' Chromium scripts share: the Debian chromium launched
// headless through playwright-core (which downloads no browser), a page
// that sends the dashboard's bearer token, and check.
import { chromium } from "playwright-core";

export function check(cond, what) {
  if (!cond) throw new Error(what);
}

export function launch(executablePath) {
  return chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

// tokenPage is a page of its own context whose every request carries
// Authorization: Bearer token.
export async function tokenPage(browser, token) {
  const context = await browser.newContext({
    extraHTTPHeaders: { Authorization: `Bearer ${token}` },
    viewport: { width: 1280, height: 900 },
  });
  return context.newPage();
}
