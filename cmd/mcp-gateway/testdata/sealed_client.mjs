// The TypeScript SDK's Client over Streamable HTTP (2025-11-25), driving
// replicas of mcp-gateway behind a balancer (sealed_e2e_test.go). Usage:
// node sealed_client.mjs URL TOKEN N. It makes N mixed requests on one
// session, 8 at a time — lists, tools/call, prompts/get, resources/read,
// completion/complete — and prints one JSON object: {"sessionId",
// "protocol", "errors": N, "messages": [the first few], "replicas":
// {name: answers}, "statuses": {"METHOD code": answers}}, counted from the
// answers' Mcp-Gateway-Replica headers and statuses.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, n] = process.argv.slice(2);
const replicas = {};
const statuses = {};
const counted = async (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set("Authorization", "Bearer " + token);
  const resp = await fetch(input, { ...init, headers });
  const r = resp.headers.get("mcp-gateway-replica") ?? "none";
  replicas[r] = (replicas[r] ?? 0) + 1;
  const k = (init?.method ?? "GET") + " " + resp.status;
  statuses[k] = (statuses[k] ?? 0) + 1;
  return resp;
};
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: counted });
const client = new Client({ name: "ts-sealed", version: "1.0.0" });
await client.connect(transport);

const ops = [
  async () => { if (!(await client.listTools()).tools.some((t) => t.name === "tb.echo")) throw new Error("no tb.echo"); },
  async () => {
    const r = await client.callTool({ name: "tb.echo", arguments: { n: 7 } });
    if (r.isError || r.structuredContent?.n !== 7) throw new Error("echo " + JSON.stringify(r));
  },
  async () => { if ((await client.listPrompts()).prompts.length === 0) throw new Error("no prompts"); },
  async () => { if ((await client.getPrompt({ name: "tb.greet", arguments: { who: "x" } })).messages.length !== 1) throw new Error("prompt"); },
  async () => { if ((await client.listResources()).resources.length === 0) throw new Error("no resources"); },
  async () => { if ((await client.readResource({ uri: "test://r1" })).contents.length !== 1) throw new Error("read"); },
  async () => {
    const r = await client.complete({ ref: { type: "ref/prompt", name: "tb.greet" }, argument: { name: "who", value: "a" } });
    if (r.completion.values.length !== 1) throw new Error("complete " + JSON.stringify(r));
  },
];
let next = 0;
let errors = 0;
const messages = [];
const worker = async () => {
  for (let i = next++; i < Number(n); i = next++) {
    try {
      await ops[i % ops.length]();
    } catch (e) {
      errors++;
      if (messages.length < 5) messages.push(`op ${i}: ${e.message}`);
    }
  }
};
await Promise.all(Array.from({ length: 8 }, worker));
const out = { sessionId: transport.sessionId ?? null, protocol: transport.protocolVersion ?? null, errors, messages, replicas, statuses };
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
