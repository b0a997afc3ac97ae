// The transparency suite's client: the same probes of every MCP feature,
// run by an official TypeScript SDK client against a server directly and
// through the gateway; the Go test (transparency_e2e_test.go) diffs the two
// outputs feature by feature.
//
//   node transparency.mjs PLAN.json
// Plan:
//   {"sdk": "v1" | "v2", "command": "...", "args": [...], "env": {...},
//    "url": "http://.../mcp", "prefix": "everything.",
//    "probes": "everything" | "conformance" | "asks"}
// "v1" is @modelcontextprotocol/sdk's Client; "v2" is
// @modelcontextprotocol/client's, with versionNegotiation {mode: "auto"}.
// With url the client speaks Streamable HTTP to it, else stdio to command.
// The probes are written for server-everything (npm, 2025-11-25) or for
// go-sdk's conformance everything-server (which speaks 2026-07-28), or
// "asks": testbackend -asks (2025-11-25), whose tool, prompt and resource
// ask the client mid-request.
// Names the server gives are compared without the prefix (the gateway's
// documented naming); the client adds it to the names it calls.
// Output: {"features": {NAME: VALUE or {"error": {code, message}}}}
import { readFileSync } from "node:fs";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const prefix = plan.prefix ?? "";

let Client, StdioClientTransport, StreamableHTTPClientTransport, v1types;
if (plan.sdk === "v2") {
  ({ Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/client/stdio"));
} else {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
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
    // Every string the form asks for, so that every server's form is met.
    const content = { name: "Ada" };
    for (const [key, prop] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
      if (key in content) continue;
      if (prop.type === "string") content[key] = prop.enum?.[0] ?? "green";
      if (prop.type === "boolean") content[key] = true;
      if (prop.type === "number" || prop.type === "integer") content[key] = 1;
    }
    return { action: "accept", content };
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
const updated = [];
client.fallbackNotificationHandler = async (n) => {
  if (n.method === "notifications/message") logs.push(n.params);
  if (n.method === "notifications/resources/updated") updated.push(n.params.uri);
};

// What a call's progress showed: whether any came, and its first
// notification. A server's last notifications may reach a client after the
// result, which then drops them, directly as through the gateway: how many
// arrive is a race, not a difference.
const progressSummary = (seen) => ({ any: seen.length > 0, first: seen[0] ?? null });
// An onprogress that passes on the server's progress only. v2's
// input_required driver reports each round it fulfils to the call's
// onprogress itself ({progress: round, message: "Fulfilling input required
// by 'tools/call' (round N)"}, no total): the client's own notice, and only
// where the call was answered input_required — through the gateway, a call
// held for a backend's request (the backend's request may be one it makes
// outside any call, as server-everything's roots/list 350 ms after
// initialized, which the gateway cannot tell from the call's own).
const serverProgress = (fn) => (p) => {
  if (plan.sdk === "v2" && p.total === undefined && /^Fulfilling input required by '[^']*' \(round \d+\)$/.test(p.message ?? "")) return;
  fn(p);
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
// callTool takes (params, resultSchema, options) in v1 and (params, options)
// in v2.
const callWith = (params, options) =>
  plan.sdk === "v2" ? client.callTool(params, options) : client.callTool(params, undefined, options);
const call = (name, args) => callWith({ name: prefix + name, arguments: args }, { timeout: 30000 });

const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({ command: plan.command, args: plan.args ?? [], env: plan.env ?? {}, stderr: "inherit" });
try {
  await client.connect(transport);
} catch (e) {
  process.stdout.write(JSON.stringify({ features: { connect: errorOf(e) } }) + "\n");
  process.exit(1);
}

if (plan.sdk === "v2") features.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
if (plan.probes === "conformance") await conformanceProbes();
else if (plan.probes === "asks") await asksProbes();
else await everythingProbes();
features.instructions = (client.getInstructions?.() ?? null) !== null;
features.capabilities = client.getServerCapabilities() ?? null;

await client.close().catch(() => {});
process.stdout.write(JSON.stringify({ features }) + "\n");
process.exit(0);

// The probes of server-everything: tools, sampling, elicitation and roots
// asked mid-call, lists, prompts, resources, completion, logging and, with
// v1, tasks.
async function everythingProbes() {
  await probe("tools/call echo", () => call("echo", { message: "hello" }));
  await probe("tools/call get-sum", () => call("get-sum", { a: 2, b: 40 }));
  await probe("structured content", () => call("get-structured-content", { location: "New York" }));
  // Before the calls that take a while: server-everything asks for the
  // roots by itself 350 ms after initialized, unless it has them by then,
  // and through the gateway a client of 2026-07-28 is asked during
  // whatever call is in flight (the call is held, hold.go). This call
  // syncs them, so that the server asks nothing mid-way in the calls
  // below, and what they show does not hang on when its timer fires.
  await probe("roots", () => call("get-roots-list", {}));
  await probe("progress", async () => {
    const seen = [];
    const result = await callWith({ name: prefix + "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } }, {
      timeout: 30000,
      onprogress: serverProgress((p) => seen.push({ progress: p.progress, total: p.total ?? null })),
    });
    return { result, progress: progressSummary(seen) };
  });
  await probe("cancellation", async () => {
    // A call the client gives up on mid-way ends with the client's abort,
    // and the session serves the next call.
    const ac = new AbortController();
    const pending = callWith({ name: prefix + "trigger-long-running-operation", arguments: { duration: 5, steps: 5 } }, {
      signal: ac.signal,
      timeout: 30000,
      onprogress: () => ac.abort("changed my mind"),
    });
    setTimeout(() => ac.abort("changed my mind"), 500); // a client that sees no progress gives up too
    let outcome;
    try {
      await pending;
      outcome = "completed";
    } catch {
      outcome = "aborted";
    }
    return { outcome, next: await call("echo", { message: "after" }) };
  });
  await probe("sampling", () => call("trigger-sampling-request", { prompt: "hi", maxTokens: 10 }));
  features["sampling request"] = asked.sampling.length;
  await probe("elicitation", () => call("trigger-elicitation-request", {}));
  await probe("elicitation request", async () => {
    const p = asked.elicitation[0];
    return p ? { message: p.message, propertyOrder: Object.keys(p.requestedSchema?.properties ?? {}), mode: p.mode ?? null } : null;
  });
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
}

// The probes of go-sdk's conformance everything-server: its tools of every
// content kind, progress, logging, the requests of the handshake era
// (test_sampling, test_elicitation) and the input_required results of
// 2026-07-28 (one round, several inputs, two rounds, a request state),
// prompts (one that needs input), resources, a subscription and completion.
async function conformanceProbes() {
  for (const tool of ["test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource", "test_multiple_content_types", "test_error_handling"]) {
    await probe(`tools/call ${tool}`, () => call(tool, {}));
  }
  await probe("progress", async () => {
    const seen = [];
    const result = await callWith({ name: prefix + "test_tool_with_progress", arguments: {} }, {
      timeout: 30000,
      onprogress: serverProgress((p) => seen.push({ progress: p.progress, total: p.total ?? null, message: p.message ?? null })),
    });
    return { result, progress: progressSummary(seen) };
  });
  await probe("cancellation", async () => {
    // A call the client gives up on at once ends with the client's abort,
    // and the session serves the next call.
    const ac = new AbortController();
    const pending = callWith({ name: prefix + "test_tool_with_progress", arguments: {} }, { signal: ac.signal, timeout: 30000 });
    ac.abort("changed my mind");
    let outcome;
    try {
      await pending;
      outcome = "completed";
    } catch (e) {
      outcome = "aborted";
    }
    return { outcome, next: await call("test_simple_text", {}) };
  });
  await probe("logging tool", async () => {
    const before = logs.length;
    const result = await call("test_tool_with_logging", {});
    await new Promise((r) => setTimeout(r, 200));
    return { result, logs: logs.slice(before).map((l) => ({ level: l.level, data: l.data })) };
  });
  await probe("sampling (request)", () => call("test_sampling", { prompt: "hi" }));
  await probe("elicitation (request)", () => call("test_elicitation", { message: "Name?" }));
  for (const kind of ["elicitation", "sampling", "list_roots", "request_state", "multiple_inputs", "multi_round", "capabilities"]) {
    await probe(`input_required ${kind}`, () => call(`test_input_required_result_${kind}`, {}));
  }
  await probe("tool definitions", async () => {
    const res = await client.listTools();
    return res.tools.map((t) => ({ ...t, name: strip(t.name) }));
  });
  await probe("prompts/list", async () => (await client.listPrompts()).prompts.map((p) => ({ ...p, name: strip(p.name) })));
  await probe("prompts/get", () => client.getPrompt({ name: prefix + "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } }));
  await probe("prompts/get input_required", () => client.getPrompt({ name: prefix + "test_input_required_result_prompt" }));
  await probe("resources/list", async () => (await client.listResources()).resources);
  await probe("resources/templates/list", async () => (await client.listResourceTemplates()).resourceTemplates);
  await probe("resources/read text", () => client.readResource({ uri: "test://static-text" }));
  await probe("resources/read binary", () => client.readResource({ uri: "test://static-binary" }));
  await probe("resources/read template", () => client.readResource({ uri: "test://template/42/data" }));
  await probe("resources/subscribe", async () => {
    // The server updates test://watched-resource every 3 s. A client of
    // 2026-07-28 subscribes on a subscriptions/listen, one of the handshake
    // era with resources/subscribe.
    if (client.getNegotiatedProtocolVersion?.() >= "2026-07-28") {
      await client.listen({ resourceSubscriptions: ["test://watched-resource"] });
    } else {
      await client.subscribeResource({ uri: "test://watched-resource" });
    }
    const deadline = Date.now() + 8000;
    while (!updated.includes("test://watched-resource") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return { updated: updated.includes("test://watched-resource") };
  });
  await probe("completion/complete", () =>
    client.complete({ ref: { type: "ref/prompt", name: prefix + "test_prompt_with_arguments" }, argument: { name: "arg1", value: "a" } }),
  );
}

// The probes of testbackend -asks: a tool, a prompt and a resource that
// ask the client (sampling, elicitation) mid-request, and how many times
// the client's handlers were asked.
async function asksProbes() {
  await probe("tools/call sample", () => call("sample", {}));
  await probe("prompts/get ask", () => client.getPrompt({ name: prefix + "ask" }));
  await probe("resources/read sampled", () => client.readResource({ uri: "test://sampled" }));
  features.asked = { sampling: asked.sampling.length, elicitation: asked.elicitation.length };
}
