package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

// TestCORSPreflight: a preflight from an allowed origin is answered before
// authentication (204, no token needed) with the methods and the headers
// asked for; the answers to an allowed origin's requests expose the MCP
// headers, a 401 included; another origin gets 403 and no CORS header.
func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	const app = "https://app.example"
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"auth_token_env": "GW_TOKEN", "allowed_origins": []string{app}}}, tb("tb")),
		"GW_TOKEN=s3cret")
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, g.base+"/mcp", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	r := preflight(app)
	if r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "DELETE") ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "mcp-session-id") ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "authorization") {
		t.Errorf("allowed origin's preflight: %d %v", r.StatusCode, r.Header)
	}
	if r := preflight("https://evil.example"); r.StatusCode != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin's preflight: %d %v", r.StatusCode, r.Header)
	}
	for _, tok := range []string{"", "s3cret"} {
		hdr := map[string]string{"Origin": app}
		if tok != "" {
			hdr["Authorization"] = "Bearer " + tok
		}
		resp := postMCP(t, g.base+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, hdr)
		exposed := resp.Header.Get("Access-Control-Expose-Headers")
		if resp.Header.Get("Access-Control-Allow-Origin") != app || !strings.Contains(exposed, "Mcp-Session-Id") ||
			!strings.Contains(exposed, "Mcp-Protocol-Version") || !strings.Contains(exposed, "WWW-Authenticate") {
			t.Errorf("token %q: %d, CORS headers %v", tok, resp.StatusCode, resp.Header)
		}
	}
}

// TestBrowserCORS (issue 26's acceptance): in headless Chromium, a page
// served on an allowed origin runs the TypeScript SDK's Client over its
// Streamable HTTP transport (bundled for the browser by esbuild) against
// the gateway, with a bearer token: it connects (the preflights pass, the
// session id is readable), lists and calls. The same page on another
// origin cannot: the browser refuses it.
func TestBrowserCORS(t *testing.T) {
	t.Parallel()
	browser := findChromium(t)
	node := needNode(t)
	root := npmPeers(t, "playwright-core/package.json")
	sdk := bundleSDK(t, root)

	page := func(gw string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/sdk.js":
				w.Header().Set("Content-Type", "text/javascript")
				_, _ = w.Write(sdk)
			case "/":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, browserPage, gw)
			default:
				http.NotFound(w, r)
			}
		})
	}
	// The gateway's address must be known to the pages, and the pages'
	// origins to the gateway.
	addr := freeAddr(t)
	gwURL := "http://" + addr
	allowed := httptest.NewServer(page(gwURL))
	defer allowed.Close()
	other := httptest.NewServer(page(gwURL))
	defer other.Close()
	g := startHTTPAt(t, addr, httpConfig(t, map[string]any{"http": map[string]any{"auth_token_env": "GW_TOKEN", "allowed_origins": []string{allowed.URL}}}, tb("tb")),
		baseEnv(t, "GW_TOKEN=browser-token"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "browser.mjs"), browser, allowed.URL+"/", other.URL+"/")
	cmd.Env = append(cmd.Environ(), "NODE_PATH="+filepath.Join(root, "node_modules"))
	out, err := cmd.Output()
	var res struct {
		Error string
		Pages []struct {
			OK        bool
			Error     string
			Tools     []string
			Echo      map[string]any
			SessionID string
			Console   []string
		}
	}
	if jerr := json.Unmarshal(out, &res); err != nil || jerr != nil || res.Error != "" || len(res.Pages) != 2 {
		t.Fatalf("chromium: %v %v %s\n%s", err, jerr, res.Error, out)
	}
	a, b := res.Pages[0], res.Pages[1]
	if !a.OK || a.SessionID == "" || a.Echo["from"] != "browser" {
		t.Errorf("the page on the allowed origin: %+v", a)
	}
	wantTools(t, a.Tools, "tb.echo")
	if b.OK || b.Error == "" {
		t.Errorf("the page on another origin connected: %+v", b)
	}
	if !strings.Contains(g.stderr.String(), "client connected client=browser") {
		t.Errorf("the gateway saw no browser client:\n%s", g.stderr)
	}
}

// browserPage is the page both origins serve: the SDK's Client, its
// Streamable HTTP transport, a bearer token; what happened goes in
// window.result. %s is the gateway's base URL.
const browserPage = `<!doctype html><meta charset="utf-8"><title>mcp-gateway from a browser</title>
<script type="module">
import { Client, StreamableHTTPClientTransport } from "/sdk.js";
try {
  const transport = new StreamableHTTPClientTransport(new URL("%s/mcp"), { requestInit: { headers: { Authorization: "Bearer browser-token" } } });
  const client = new Client({ name: "browser", version: "1.0.0" });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const echo = await client.callTool({ name: "tb.echo", arguments: { from: "browser" } });
  const sessionId = transport.sessionId;
  await transport.terminateSession();
  window.result = { ok: true, tools, echo: echo.structuredContent, sessionId };
} catch (e) {
  window.result = { ok: false, error: String(e) };
}
</script>`

// bundleSDK bundles the TypeScript SDK's Client and Streamable HTTP
// transport from node_modules into one ES module for the browser, with
// esbuild's Go API (a browser cannot load the SDK's CommonJS dependencies
// as they are).
func bundleSDK(t *testing.T, root string) []byte {
	t.Helper()
	res := api.Build(api.BuildOptions{
		Stdin: &api.StdinOptions{
			Contents: `export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";`,
			ResolveDir: root,
			Sourcefile: "sdk-entry.js",
		},
		Bundle:   true,
		Format:   api.FormatESModule,
		Platform: api.PlatformBrowser,
		Target:   api.ES2022,
		Write:    false,
		LogLevel: api.LogLevelSilent,
	})
	if len(res.Errors) > 0 || len(res.OutputFiles) != 1 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		t.Fatalf("bundling the SDK: %s", strings.Join(msgs, "\n"))
	}
	return res.OutputFiles[0].Contents
}
