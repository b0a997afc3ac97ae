// The TypeScript SDK's Client with its OAuth provider, against mcp-gateway
// as an OAuth resource server (teams_e2e_test.go). Usage:
//   node oauth_client.mjs URL CLIENT_ID USERNAME PASSWORD
// The first connect is refused (401); the SDK reads the gateway's protected
// resource metadata, discovers the authorization server and sends the
// "browser" to its authorization URL, which this script plays: it fills in
// the OpenID provider's login page and follows the redirects to the
// callback, then hands the code to the transport (finishAuth). The second
// connect carries the token. Prints one JSON object: {"unauthorized": bool,
// "resource": the resource the SDK asked for, "scope": the scope it asked
// for, "tools": [names], "echo": structuredContent}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, clientId, username, password] = process.argv.slice(2);
const redirectUrl = "http://127.0.0.1:1/callback";
let tokens, verifier, code, asked;

const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { redirect_uris: [redirectUrl], client_name: "oauth_client.mjs", token_endpoint_auth_method: "none",
      grant_types: ["authorization_code"], response_types: ["code"] };
  },
  clientInformation() { return { client_id: clientId }; }, // registered in advance
  tokens() { return tokens; },
  saveTokens(t) { tokens = t; },
  saveCodeVerifier(v) { verifier = v; },
  codeVerifier() { return verifier; },
  async redirectToAuthorization(authUrl) {
    asked = authUrl;
    // The authorization URL → the OP's login page → the form → the
    // callback with the code.
    let res = await fetch(authUrl, { redirect: "manual" });
    let loc = new URL(res.headers.get("location"), authUrl);
    const id = loc.searchParams.get("authRequestID");
    if (!id) throw new Error(`no login page: ${res.status} ${loc}`);
    res = await fetch(new URL("/login/username", authUrl), {
      method: "POST", redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ id, username, password }),
    });
    loc = new URL(res.headers.get("location"), authUrl);
    while (!loc.searchParams.get("code")) {
      if (loc.searchParams.get("error")) throw new Error(`refused: ${loc}`);
      res = await fetch(loc, { redirect: "manual" });
      loc = new URL(res.headers.get("location"), loc);
    }
    code = loc.searchParams.get("code");
  },
};

let unauthorized = false;
let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
let client = new Client({ name: "ts-oauth", version: "1.0.0" });
try {
  await client.connect(transport);
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  unauthorized = true;
  await transport.finishAuth(code);
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  client = new Client({ name: "ts-oauth", version: "1.0.0" });
  await client.connect(transport);
}
const tools = (await client.listTools()).tools.map((t) => t.name);
const echo = await client.callTool({ name: "a.echo", arguments: { who: "ts" } });
await transport.terminateSession();
await client.close();
process.stdout.write(JSON.stringify({
  unauthorized, tools, echo: echo.structuredContent,
  resource: asked?.searchParams.get("resource") ?? null, scope: asked?.searchParams.get("scope") ?? null,
}) + "\n");
