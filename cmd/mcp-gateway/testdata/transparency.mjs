// The transparency suite's client: the same probes of every MCP feature,
// run by an official TypeScript SDK client against a server directly and
// through the gateway; the Go test (transparency_e2e_test.go) diffs the two
// outputs feature by feature.
//
//   node transparency.mjs PLAN.json
// Plan:
//   {"sdk": "v1" | "v2", "command": "...", "args": [...], "env": {...},
//    "prefix": "everything."}
// "v1" is @modelcontextprotocol/sdk's Client; "v2" is
// @modelcontextprotocol/client's, with versionNegotiation {mode: "auto"}.
// Names the server gives are compared without the prefix (the gateway's
// documented naming); the client adds it to the names it calls.
// Output: {"features": {NAME: VALUE or {"error": {code, message}}}}
import { readFileSync } from "node:fs";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const prefix = plan.prefix ?? "";

let Client, StdioClientTransport, v1types;
if (plan.sdk === "v2") {
  ({ Client } = await import("@modelcontextprotocol/client"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/client/stdio"));
} else {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
  v1types = await import("@modelcontextprotocol/sdk/types.js");
}

const capabilities = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };
const options = { capabilities };
if (plan.sdk === "v2") options.versionNegotiation = { mode: "auto" };
const client = new Client({ name: "transparency", version: "1.0.0" }, options);

// What the server asks of the client, answered the same way every run.
const asked = { sampling: [], elicitation: [], roots: 0 };
const handlers = {
  "sampling/createMessage": async (req) => {
    asked.sampling.push(req.params);
    return { model: "test-model", role: "assistant", content: { type: "text", text: "sampled answer" } };
  },
  "elicitation/create": async (req) => {
    asked.elicitation.push(req.params);
    return { action: "accept", content: { name: "Ada" } };
  },
  "roots/list": async () => {
    asked.roots++;
    return { roots: [{ uri: "file:///tmp/transparency-root", name: "root" }] };
  },
};
for (const [method, fn] of Object.entries(handlers)) {
  if (plan.sdk === "v2") {
    client.setRequestHandler(method, fn);
  } else {
    const schema = {
      "sampling/createMessage": v1types.CreateMessageRequestSchema,
      "elicitation/create": v1types.ElicitRequestSchema,
      "roots/list": v1types.ListRootsRequestSchema,
    }[method];
    client.setRequestHandler(schema, fn);
  }
}
const logs = [];
client.fallbackNotificationHandler = async (n) => {
  if (n.method === "notifications/message") logs.push(n.params);
};

const strip = (name) => (name.startsWith(prefix) ? name.slice(prefix.length) : `UNPREFIXED:${name}`);

function errorOf(e) {
  return { error: { code: e?.code ?? null, message: String(e?.message ?? e) } };
}

const features = {};
async function probe(name, fn) {
  try {
    features[name] = await fn();
  } catch (e) {
    features[name] = errorOf(e);
  }
}
const call = (name, args) => client.callTool({ name: prefix + name, arguments: args }, undefined, { timeout: 30000 });

const transport = new StdioClientTransport({ command: plan.command, args: plan.args ?? [], env: plan.env ?? {}, stderr: "inherit" });
try {
  await client.connect(transport);
} catch (e) {
  process.stdout.write(JSON.stringify({ features: { connect: errorOf(e) } }) + "\n");
  process.exit(1);
}

if (plan.sdk === "v2") features.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
await probe("tools/call echo", () => call("echo", { message: "hello" }));
await probe("tools/call get-sum", () => call("get-sum", { a: 2, b: 40 }));
await probe("sampling", () => call("trigger-sampling-request", { prompt: "hi", maxTokens: 10 }));
features["sampling request"] = asked.sampling.length;
await probe("elicitation", () => call("trigger-elicitation-request", {}));
await probe("elicitation request", async () => {
  const p = asked.elicitation[0];
  return p ? { message: p.message, propertyOrder: Object.keys(p.requestedSchema?.properties ?? {}), mode: p.mode ?? null } : null;
});
await probe("roots", () => call("get-roots-list", {}));
await probe("tools/list", async () => {
  const res = await client.listTools();
  return res.tools.map((t) => strip(t.name));
});
await probe("tool definitions", async () => {
  const res = await client.listTools();
  return res.tools.map((t) => ({ ...t, name: strip(t.name) }));
});
await probe("prompts/list", async () => {
  const res = await client.listPrompts();
  return res.prompts.map((p) => ({ ...p, name: strip(p.name) }));
});
await probe("prompts/get", () => client.getPrompt({ name: prefix + "simple-prompt" }));
await probe("resources/list", async () => (await client.listResources()).resources.map((r) => r.uri));
await probe("resources/templates/list", async () =>
  (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate),
);
await probe("resources/read", () => client.readResource({ uri: "demo://resource/static/document/architecture.md" }));
await probe("completion/complete", () =>
  client.complete({ ref: { type: "ref/prompt", name: prefix + "completable-prompt" }, argument: { name: "department", value: "E" } }),
);
await probe("logging/setLevel", () => client.setLoggingLevel("debug"));
if (plan.sdk === "v1") {
  // A task-augmented call (v2 has no tasks API yet): the kinds of messages
  // the stream yields, the result (task ids, which the server makes up,
  // replaced), and the task as tasks/get and tasks/list report it after.
  const taskProbe = (ambiguous) => async () => {
    const tasks = client.experimental.tasks;
    const kinds = [];
    let taskId = null;
    let result = null;
    const stream = tasks.callToolStream({ name: prefix + "simulate-research-query", arguments: { topic: "gateways", ambiguous } }, undefined, {
      task: { ttl: 60000 },
      timeout: 30000,
    });
    for await (const m of stream) {
      if (kinds[kinds.length - 1] !== m.type) kinds.push(m.type);
      if (m.type === "taskCreated") taskId = m.task.taskId;
      if (m.type === "result") result = m.result;
      if (m.type === "error") result = errorOf(m.error);
    }
    const anon = (v) => JSON.parse(JSON.stringify(v ?? null).replaceAll(taskId ?? "\u0000", "TASK"));
    const got = taskId ? await tasks.getTask(taskId) : null;
    const listed = taskId ? (await tasks.listTasks()).tasks.filter((t) => t.taskId === taskId).map((t) => t.status) : [];
    return { kinds, result: anon(result), status: got?.status ?? null, listed };
  };
  await probe("tasks", taskProbe(false));
  // The server asks the client (elicitation) while the task waits for input.
  const before = asked.elicitation.length;
  await probe("tasks input_required", async () => ({ ...(await taskProbe(true)()), elicited: asked.elicitation.length - before }));
}
features.instructions = (client.getInstructions?.() ?? null) !== null;
features.capabilities = client.getServerCapabilities() ?? null;

await client.close().catch(() => {});
process.stdout.write(JSON.stringify({ features }) + "\n");
process.exit(0);
