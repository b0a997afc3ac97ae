// A minimal MCP server on stdio, without dependencies, whose one tool
// answers every call with a JSON-RPC error (the gateway must forward code,
// message and data byte for byte, adding "server"). Arguments: {"kind":
// "object" | "string" | "none"} choose the shape of data.
import { createInterface } from "node:readline";

const write = (s) => process.stdout.write(s + "\n");
const reply = (id, result) => write(JSON.stringify({ jsonrpc: "2.0", id, result }));

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.id === undefined || msg.method === undefined) return;
  const id = JSON.stringify(msg.id);
  switch (msg.method) {
    case "initialize":
      reply(msg.id, {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "rpcerror", version: "1.0.0" },
      });
      break;
    case "tools/list":
      reply(msg.id, { tools: [{ name: "fail", description: "always a JSON-RPC error", inputSchema: { type: "object" } }] });
      break;
    case "tools/call": {
      const kind = msg.params?.arguments?.kind ?? "object";
      // Written by hand: a 23-digit integer must survive the trip.
      const data =
        kind === "object" ? ',"data":{"why":"because","n":12345678901234567890123}' :
        kind === "string" ? ',"data":"plain text"' : "";
      write(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32050,"message":"backend says no"${data}}}`);
      break;
    }
    case "ping":
      reply(msg.id, {});
      break;
    default:
      write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } }));
  }
});
rl.on("close", () => process.exit(0));
