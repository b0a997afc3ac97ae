// Drives host.html in headless Chromium (playwright-core, the OS's
// Chromium): for each scenario of the plan, the host renders one app from
// one endpoint — a server directly, or the gateway — and the app's own
// callServerTool round trip is made: get-time's button (the basic apps),
// the system monitor's polling. What the page and the app show is
// reported, with a screenshot per scenario in the artifact directory.
//
// node browser.mjs PLAN.json
// PLAN: {"chromium", "artifacts", "base", "scenarios": [{"label",
// "endpoint", "tool", "kind": "time"|"sysmon"}]}
// Prints one JSON line: {"ok":true,"results":[...]} or {"ok":false,"error":...}.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import path from "node:path";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const wait = { timeout: 90_000 };
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

let browser;
try {
  browser = await chromium.launch({
    executablePath: plan.chromium,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const context = await browser.newContext({ viewport: { width: 800, height: 720 } });
  const results = [];
  for (const sc of plan.scenarios) {
    results.push(await run(context, sc));
  }
  console.log(JSON.stringify({ ok: true, results }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e) }));
  process.exitCode = 1;
} finally {
  if (browser) await browser.close();
}

async function run(context, sc) {
  const page = await context.newPage();
  const console_ = [];
  page.on("console", (m) => console_.push(`${m.type()}: ${m.text()}`.slice(0, 300)));
  page.on("pageerror", (e) => console_.push(`pageerror: ${e.message}`.slice(0, 300)));
  const out = { label: sc.label, console: console_ };
  try {
    const u = `${plan.base}/host.html?endpoint=${encodeURIComponent(sc.endpoint)}&tool=${encodeURIComponent(sc.tool)}`;
    await page.goto(u);
    await page.waitForFunction(() => window.host && window.host.state !== "starting", null, wait);
    const host = await page.evaluate(() => window.host);
    Object.assign(out, { state: host.state, error: host.error, uri: host.uri, contentsURI: host.contentsURI, htmlSHA256: host.htmlSHA256 });
    if (host.state !== "rendered") return out;
    const app = page.frames().find((f) => f.parentFrame() === page.mainFrame());
    if (sc.kind === "time") {
      // The tool's result, sent by the host, shows; then the app's own
      // call, by the button.
      out.initial = await waitText(app, "code", `${iso.source}|^\\[ERROR\\]$`);
      await app.getByRole("button", { name: "Get Server Time" }).click();
      await page.waitForFunction(() => window.host.calls.some((c) => c.name === "get-time" && ("isError" in c || "error" in c)), null, wait);
      out.after = await waitText(app, "code", `${iso.source}|^\\[ERROR\\]$`, out.initial);
    } else {
      // The system monitor starts polling poll-system-stats as soon as it
      // has get-system-info's result, and draws what it gets.
      await waitText(app, "#memory-percent", "^\\d+%$");
      await waitText(app, "#status-text", "^\\d\\d:\\d\\d:\\d\\d$|^Error$");
      const text = async (sel) => (await app.locator(sel).textContent()).trim();
      out.stats = {
        hostname: await text("#info-hostname"),
        platform: await text("#info-platform"),
        uptime: await text("#info-uptime"),
        memory: await text("#memory-percent"),
        status: await text("#status-text"),
        // Chart.js drew into the canvas: some pixel is not transparent.
        drawn: await app.locator("#cpu-chart").evaluate((c) => {
          const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
          for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
          return false;
        }),
      };
    }
    out.calls = await page.evaluate(() => window.host.calls);
    out.screenshot = path.join(plan.artifacts, `apps-${sc.label}.png`);
    await page.screenshot({ path: out.screenshot, fullPage: true });
  } catch (e) {
    out.error = String(e && e.stack || e);
    out.calls = await page.evaluate(() => window.host && window.host.calls).catch(() => undefined);
  } finally {
    await page.close();
  }
  return out;
}

// waitText waits, in the app's frame, until the text of the first element
// selector matches the regular expression re and is not not, and returns it.
async function waitText(frame, selector, re, not) {
  await frame.waitForFunction(([sel, re, not]) => {
    const el = document.querySelector(sel);
    const t = el && el.textContent.trim();
    return !!t && new RegExp(re).test(t) && t !== not;
  }, [selector, re, not ?? null], wait);
  return (await frame.locator(selector).first().textContent()).trim();
}
