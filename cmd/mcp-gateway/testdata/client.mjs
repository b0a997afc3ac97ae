// A real MCP host in miniature: the TypeScript SDK's Client over
// StdioClientTransport, driving mcp-gateway the way Claude Desktop, Cursor
// and friends do. The Go test (npm_e2e_test.go) writes a plan, runs
// `node client.mjs PLAN.json`, and asserts on the one JSON object this
// script prints to stdout.
//
// Plan:
//   {"command": "...", "args": [...], "env": {...}, "clientName": "...",
//    "steps": [STEP, ...]}
// STEP:
//   {"op": "list"}                                    tools/list
//   {"op": "call", "name": N, "arguments": {...},     tools/call; with
//    "progress": true, "timeoutMs": 60000}            progress, an onprogress callback
//   {"op": "parallel", "steps": [STEP, ...]}          run steps concurrently
// Output:
//   {"server": serverInfo, "steps": [RESULT, ...], "notifications": [{method, params}],
//    "errors": [the SDK's onerror messages]}
// RESULT (one per step, "parallel" nests "steps"):
//   {"op", "name", "ok": true, "result": ..., "progress": [...], "ms": N}
//   {"op", "name", "ok": false, "error": {"code", "message", "data"}, "ms": N}
//   {"op": "list", "ok": true, "tools": [names]}
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const notifications = [];
const errors = []; // the SDK's onerror reports (protocol-level complaints)

const client = new Client({ name: plan.clientName ?? "e2e-ts", version: "1.0.0" }, { capabilities: {} });
client.fallbackNotificationHandler = async (n) => {
  notifications.push({ method: n.method, params: n.params ?? null });
};
client.onerror = (e) => errors.push(String(e?.message ?? e));

const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args ?? [],
  env: plan.env ?? {},
  stderr: "inherit", // the gateway's log, for the Go test's failure output
});

function errorOf(e) {
  if (e instanceof McpError) {
    // McpError prefixes the message with "MCP error CODE: ".
    const prefix = `MCP error ${e.code}: `;
    const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return { code: e.code, message, data: e.data ?? null };
  }
  return { code: null, message: String(e?.message ?? e), data: null };
}

async function run(step) {
  const start = Date.now();
  const out = { op: step.op, name: step.name };
  try {
    switch (step.op) {
      case "list": {
        const res = await client.listTools();
        out.tools = res.tools.map((t) => t.name);
        break;
      }
      case "call": {
        const progress = [];
        const opts = { timeout: step.timeoutMs ?? 60000 };
        if (step.progress) {
          opts.onprogress = (p) => progress.push(p);
          opts.resetTimeoutOnProgress = true;
        }
        out.result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
        if (step.progress) out.progress = progress;
        break;
      }
      case "parallel":
        out.steps = await Promise.all(step.steps.map(run));
        break;
      default:
        throw new Error(`unknown op ${step.op}`);
    }
    out.ok = true;
  } catch (e) {
    out.ok = false;
    out.error = errorOf(e);
  }
  out.ms = Date.now() - start;
  return out;
}

let code = 0;
const results = [];
try {
  await client.connect(transport);
  for (const step of plan.steps) {
    results.push(await run(step));
  }
} catch (e) {
  results.push({ op: "connect", ok: false, error: errorOf(e) });
  code = 1;
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify({ server: client.getServerVersion() ?? null, steps: results, notifications, errors }) + "\n");
process.exit(code);
