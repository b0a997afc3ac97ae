// A person signs in to a per_user_login server in headless Chromium
// (playwright-core, the Debian chromium), from the link of their call's
// error: the gateway's page names them, its button sends the browser to
// the upstream, which asks who signs in, and its answer comes back to the
// gateway's callback. Screenshots go to the artifact directory.
//
// node upstream_signin.mjs LINK CALLER USER CHROMIUM ARTIFACT_DIR
// Prints one JSON line: {"ok":true,"screenshots":[...]} or {"ok":false,"error":...}.
import { check, launch } from "./chromium.mjs";
import path from "node:path";

const [link, caller, user, executablePath, artifacts] = process.argv.slice(2);

let browser;
try {
  browser = await launch(executablePath);
  const page = await (await browser.newContext({ viewport: { width: 1000, height: 700 } })).newPage();
  const resp = await page.goto(link);
  check(resp.status() === 200, `the link answered ${resp.status()}`);
  const text = await page.textContent("body");
  check(text.includes(caller), `the page does not name ${caller}: ${text}`);
  const shots = [path.join(artifacts, "upstream-signin-confirm.png"), path.join(artifacts, "upstream-signin-done.png")];
  await page.screenshot({ path: shots[0], fullPage: true });

  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Sign in to people" }).click()]);
  check(new URL(page.url()).pathname === "/authorize", `the button led to ${page.url()}: ${(await page.content()).slice(0, 400)}`);
  await page.fill('input[name="user"]', user);
  await Promise.all([page.waitForURL("**/upstream/callback**"), page.press('input[name="user"]', "Enter")]);
  const done = await page.textContent("body");
  check(done.includes("Signed in to people"), `the callback's page: ${done}`);
  await page.screenshot({ path: shots[1], fullPage: true });
  console.log(JSON.stringify({ ok: true, screenshots: shots }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exitCode = 1;
} finally {
  if (browser) await browser.close();
}
