// Drives the trust layer's dashboard in headless Chromium (playwright-core,
// the Debian chromium): the page shows a withheld change with its diff and
// findings; Approve releases it; the page then shows it among the tools.
// Screenshots of both go to the artifact directory.
//
// node dashboard.mjs URL TOKEN CHROMIUM ARTIFACT_DIR
// Prints one JSON line: {"ok":true,"screenshots":[...]} or {"ok":false,"error":...}.
import { check, launch, tokenPage } from "./chromium.mjs";
import path from "node:path";

const [url, token, executablePath, artifacts] = process.argv.slice(2);

let browser;
try {
  browser = await launch(executablePath);
  const page = await tokenPage(browser, token);
  const resp = await page.goto(url);
  check(resp.status() === 200, `GET / answered ${resp.status()}`);

  // The page's one style sheet is allowed by the CSP's hash.
  const bg = await page.evaluate(() => getComputedStyle(document.querySelector("header")).backgroundColor);
  check(bg === "rgb(27, 31, 36)", `the style sheet was not applied (header background ${bg})`);

  const change = page.locator('#changes .change[data-server="calc"][data-name="echo"][data-kind="tool"]');
  check(await change.count() === 1, "no withheld change of calc's echo");
  const added = await change.locator("pre.diff span.add").allTextContents();
  check(added.some((l) => l.includes("aws/credentials")), `the diff does not show the new description: ${added}`);
  const removed = await change.locator("pre.diff span.del").allTextContents();
  check(removed.some((l) => l.includes("testbackend tool echo")), `the diff does not show the old description: ${removed}`);
  const findings = await change.locator(".finding").allTextContents();
  check(findings.some((f) => f.includes("hidden-instructions")), `no finding: ${findings}`);
  check(await page.locator('#tools tr[data-tool="calc.echo"]').count() === 0, "the withheld echo is among the tools");

  const shots = [path.join(artifacts, "dashboard-withheld.png"), path.join(artifacts, "dashboard-approved.png")];
  await page.screenshot({ path: shots[0], fullPage: true });

  await Promise.all([
    page.waitForNavigation(),
    change.getByRole("button", { name: "Approve tool echo" }).click(),
  ]);
  if (!page.url().includes("?approved=")) {
    throw new Error(`Approve did not approve: ${page.url()}: ${(await page.content()).slice(0, 400)}`);
  }
  const notice = await page.locator("#notice").textContent();
  check(notice.includes("Approved tool echo of calc"), `notice: ${notice}`);
  check(await page.locator("#changes .change").count() === 0, "still withheld after Approve");
  const row = page.locator('#tools tr[data-tool="calc.echo"]');
  check(await row.count() === 1, "echo is not among the tools after Approve");
  check((await row.textContent()).includes("Echo."), "echo's row does not show the approved description");
  await page.screenshot({ path: shots[1], fullPage: true });
  console.log(JSON.stringify({ ok: true, screenshots: shots }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exitCode = 1;
} finally {
  if (browser) await browser.close();
}
