// The TypeScript SDK's Client over HTTP, driving mcp-gateway --transport
// http (http_e2e_test.go). Usage: node http_client.mjs streamable|noget|sse URL
// Prints one JSON object: {"tools": [names], "echo": structuredContent,
// "progress": [progress values], "sessionId": "...", "gets": N}. noget is
// the Streamable HTTP transport whose standalone GET stream is refused
// (405, as a server without one answers), so that whatever arrives comes
// on the POST streams; gets counts the GETs the transport tried.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [kind, url] = process.argv.slice(2);
let gets = 0;
const noGet = async (input, init) => {
  if ((init?.method ?? "GET") === "GET") {
    gets++;
    return new Response(null, { status: 405 });
  }
  return fetch(input, init);
};
const transport = kind === "sse"
  ? new SSEClientTransport(new URL(url))
  : new StreamableHTTPClientTransport(new URL(url), kind === "noget" ? { fetch: noGet } : undefined);
const client = new Client({ name: "ts-" + kind, version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const echo = await client.callTool({ name: "tb.echo", arguments: { kind, n: 42 } });
const progress = [];
// 100 ms after each step: the SDK runs a notification's handler a
// microtask later but a response's at once, and drops the progress handler
// with the response, so a progress read in the same chunk as the response
// would be lost on the client's side.
await client.callTool({ name: "tb.progress", arguments: { steps: 2, ms: 100 } }, undefined, {
  onprogress: (p) => progress.push(p.progress),
});
const out = { tools, echo: echo.structuredContent, progress, sessionId: transport.sessionId ?? null, gets };
if (kind !== "sse") await transport.terminateSession();
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
