// Drives the dashboard's "Add a server" in headless Chromium
// (playwright-core, the Debian chromium): search the registry, Add the
// everything entry, type its secret into the password field, review the
// plan (what it will run), confirm; the page then says it was added, and
// the server appears with its provenance and its tools pending approval.
// No page the browser is shown holds the secret's value.
//
// node dashboard_add.mjs URL TOKEN CHROMIUM ARTIFACT_DIR SECRET
// Prints one JSON line: {"ok":true,"screenshots":[...]} or {"ok":false,"error":...}.
import { check, launch, tokenPage } from "./chromium.mjs";
import path from "node:path";

const [url, token, executablePath, artifacts, secret] = process.argv.slice(2);

let browser;
try {
  browser = await launch(executablePath);
  const page = await tokenPage(browser, token);
  // Every answer the browser gets is checked for the secret.
  const leaks = [];
  page.on("response", async (resp) => {
    try {
      const body = await resp.text();
      if (body.includes(secret)) leaks.push(resp.url());
    } catch {}
  });
  const shots = [];
  const shot = async (name) => {
    const p = path.join(artifacts, name);
    await page.screenshot({ path: p, fullPage: true });
    shots.push(p);
  };

  const resp = await page.goto(url);
  check(resp.status() === 200, `GET / answered ${resp.status()}`);

  // Search.
  await page.getByRole("searchbox", { name: "Search the registry" }).fill("everything");
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Search" }).click()]);
  const row = page.locator('#results tr[data-entry="io.github.modelcontextprotocol/everything"]');
  check(await row.count() === 1, `no search result for everything: ${(await page.locator("#add").textContent()).slice(0, 400)}`);
  check((await row.textContent()).includes("2026.8.31"), "the result does not show the latest version");
  await shot("dashboard-add-search.png");

  // Add: the entry's required inputs, the secret as a password field.
  await Promise.all([page.waitForNavigation(), row.getByRole("button", { name: "Add" }).click()]);
  const form = page.locator("#add-form");
  check(await form.count() === 1, "no add form");
  const field = form.locator('input[name="env.EVERYTHING_TOKEN"]');
  check(await field.count() === 1, "no field for EVERYTHING_TOKEN");
  check(await field.getAttribute("type") === "password", "the secret's field is not a password field");
  await field.fill(secret);
  await shot("dashboard-add-form.png");

  // Review: what it will run, before confirming; the secret is a reference.
  await Promise.all([page.waitForNavigation(), form.getByRole("button", { name: "Review" }).click()]);
  const plan = page.locator("#add-plan pre");
  check(await plan.count() === 1, `no plan: ${(await page.content()).slice(0, 600)}`);
  const text = await plan.textContent();
  for (const want of ["runs: npx -y @modelcontextprotocol/server-everything@2026.8.31",
    "env EVERYTHING_TOKEN=${secret:everything.EVERYTHING_TOKEN} (a secret", "trust: approve"]) {
    check(text.includes(want), `the plan does not say ${want}: ${text}`);
  }
  check(!(await page.content()).includes(secret), "the plan's page holds the secret");
  await shot("dashboard-add-plan.png");

  // Confirm.
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Add everything" }).click()]);
  check(page.url().includes("?added="), `confirm did not add: ${page.url()}: ${(await page.content()).slice(0, 600)}`);
  const notice = await page.locator("#notice").textContent();
  check(notice.includes("Added everything"), `notice: ${notice}`);

  // The gateway reloads and starts it: its row shows the provenance and
  // its tools pending approval; they are among the withheld changes.
  const server = page.locator('#servers tr[data-server="everything"]');
  let state = "";
  for (let i = 0; i < 240; i++) {
    await page.goto(url);
    if (await server.count() === 1) {
      state = await server.textContent();
      if (state.includes("pending approval")) break;
    }
    await page.waitForTimeout(500);
  }
  check(state.includes("pending approval"), `the added server is not pending approval: ${state}`);
  check(state.includes("registry io.github.modelcontextprotocol/everything@2026.8.31"), `no provenance in the server's row: ${state}`);
  check(await page.locator('#changes .change[data-server="everything"][data-name="get-env"]').count() === 1, "get-env is not withheld for review");
  await shot("dashboard-add-pending.png");
  check(leaks.length === 0, `answers that hold the secret: ${leaks}`);
  console.log(JSON.stringify({ ok: true, screenshots: shots }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exitCode = 1;
} finally {
  if (browser) await browser.close();
}
