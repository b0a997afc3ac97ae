// The host of host.html. What it did is kept in window.host for the test
// to read: state ("rendered" once the app has the tool's result, or
// "failed"), the tool's UI URI, the HTML's SHA-256, and every tools/call
// the app made through the bridge with its outcome.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";

const host = (window.host = { state: "starting", calls: [] });
const params = new URLSearchParams(location.search);
const endpoint = new URL(params.get("endpoint"), location.href);
const toolName = params.get("tool");
const show = (id, text) => (document.getElementById(id).textContent = text);

async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

try {
  show("tool", toolName);
  // A host that renders MCP Apps says so.
  const client = new Client(
    { name: "apps-test-host", version: "1.0.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(endpoint));
  const { tools } = await client.listTools();
  host.tools = tools.map((t) => t.name);
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) throw new Error(`no tool ${toolName} in ${host.tools.join(", ")}`);
  const uri = getToolUiResourceUri(tool);
  host.uri = uri;
  show("uri", uri);
  const read = await client.readResource({ uri });
  const html = read.contents[0].text;
  host.htmlSHA256 = await sha256(html);
  host.contentsURI = read.contents[0].uri;

  // The app's frame: scripts only, an opaque origin. The bridge listens
  // before the app is loaded, so that it sees the app's ui/initialize.
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  document.getElementById("app").append(frame);
  const bridge = new AppBridge(client, { name: "apps-test-host", version: "1.0.0" },
    { openLinks: {}, serverTools: {}, logging: {} },
    { hostContext: { theme: "light", displayMode: "inline", availableDisplayModes: ["inline"] } });
  bridge.oninitialized = async () => {
    try {
      await bridge.sendToolInput({ arguments: {} });
      const result = await client.callTool({ name: toolName, arguments: {} });
      host.toolResult = result;
      await bridge.sendToolResult(result);
      host.state = "rendered";
      show("state", "rendered");
    } catch (e) {
      fail(e);
    }
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  // Every call the app makes goes on to the endpoint as the bridge does it,
  // and is recorded.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (p, extra) => {
    const call = { name: p.name };
    host.calls.push(call);
    try {
      const r = await forward(p, extra);
      call.isError = !!r.isError;
      call.structuredContent = r.structuredContent;
      return r;
    } catch (e) {
      call.error = String(e && e.message || e);
      throw e;
    }
  };
  frame.srcdoc = html;
} catch (e) {
  fail(e);
}

function fail(e) {
  host.state = "failed";
  host.error = String(e && e.stack || e);
  show("state", "failed: " + host.error);
}
