package main

// MCP Apps through the gateway with the official example servers from npm
// (@modelcontextprotocol/server-basic-vanillajs, server-basic-react and
// server-system-monitor, pinned in package-lock.json): each one's UI
// resource is its own, read back byte for byte; an app's call by its
// server's own tool name reaches that server; names and URIs stay the
// same across restarts. apps_browser_e2e_test.go renders the apps.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// uiCaps are the capabilities of a host that renders MCP Apps.
const uiCaps = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`

// exampleApp is one of the ext-apps example servers: its package, the
// tool whose UI it serves, and the URI the server gives that UI.
type exampleApp struct {
	name, pkg, tool, uri string
}

var exampleApps = []exampleApp{
	{"vanilla", "server-basic-vanillajs", "get-time", "ui://get-time/mcp-app.html"},
	{"react", "server-basic-react", "get-time", "ui://get-time/mcp-app.html"},
	{"sysmon", "server-system-monitor", "get-system-info", "ui://system-monitor/mcp-app.html"},
}

// shownURI is the URI the gateway shows for the app's UI.
func (a exampleApp) shownURI() string {
	return "ui://" + a.name + "/" + strings.TrimPrefix(a.uri, "ui://")
}

// html is the app's HTML as its package ships it.
func (a exampleApp) html(t *testing.T, root string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "node_modules", "@modelcontextprotocol", a.pkg, "dist", "mcp-app.html"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exampleAppPeers checks the npm peers the example apps need and returns
// the repository root.
func exampleAppPeers(t *testing.T, extra ...string) string {
	t.Helper()
	for _, a := range exampleApps {
		extra = append(extra, "@modelcontextprotocol/"+a.pkg+"/dist/index.js")
	}
	return npmPeers(t, extra...)
}

// appTool is a tool definition as MCP Apps reads it.
type appTool struct {
	Name string `json:"name"`
	Meta struct {
		UI struct {
			ResourceURI string   `json:"resourceUri"`
			Visibility  []string `json:"visibility"`
		} `json:"ui"`
		Legacy string `json:"ui/resourceUri"`
	} `json:"_meta"`
}

// appsSession is what one run of the gateway showed a host that renders
// apps: tools/list and resources/list, as they came.
type appsSession struct {
	tools, resources json.RawMessage
}

// The three example servers behind one gateway, twice (a restart): every
// tool's UI resource reads back its own server's HTML, byte for byte, under
// a URI naming the server; the system monitor's app-only poll-system-stats
// is callable by its own name (as its app calls it) and listed only to a
// host that renders apps; get-time, which both basic servers have, is
// ambiguous by its own name; the lists and URIs are the same after the
// restart, when the first answers come from the snapshots.
func TestAppsExampleServers(t *testing.T) {
	t.Parallel()
	root := exampleAppPeers(t)
	var servers []beServer
	for _, a := range exampleApps {
		servers = append(servers, nodeServer(root, a.name, a.pkg, "--stdio"))
	}
	home, _ := snapshotHome(t)
	cfg := gatewayConfig(t, map[string]any{"startup_timeout_ms": 60000, "first_start_wait_ms": 60000}, servers...)

	var runs []appsSession
	for run := range 2 {
		s, _ := initSession(t, startGateway(t, homeEnv(t, home), "--stdio", "--config", cfg), "apps-host", uiCaps)
		tools := s.Call("tools/list", `{}`)
		var list struct {
			Tools []appTool `json:"tools"`
		}
		if err := json.Unmarshal(tools.Member("result"), &list); err != nil {
			t.Fatalf("tools/list: %s", tools)
		}
		var names []string
		for _, a := range exampleApps {
			i := slices.IndexFunc(list.Tools, func(tl appTool) bool { return tl.Name == a.name+"."+a.tool })
			if i < 0 {
				t.Fatalf("run %d: no %s.%s in %s", run, a.name, a.tool, tools)
			}
			if m := list.Tools[i].Meta; m.UI.ResourceURI != a.shownURI() || m.Legacy != a.shownURI() {
				t.Errorf("run %d: %s.%s names %q (legacy %q), want %q", run, a.name, a.tool, m.UI.ResourceURI, m.Legacy, a.shownURI())
			}
		}
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		wantTools(t, names, "sysmon.poll-system-stats")

		res := s.Call("resources/list", `{}`)
		for _, a := range exampleApps {
			if !bytes.Contains(res.Member("result"), []byte(`"uri":"`+a.shownURI()+`"`)) {
				t.Errorf("run %d: resources/list lacks %s: %s", run, a.shownURI(), res)
			}
			read := s.Call("resources/read", `{"uri":"`+a.shownURI()+`"}`)
			var r struct {
				Contents []struct {
					URI      string `json:"uri"`
					MimeType string `json:"mimeType"`
					Text     string `json:"text"`
				} `json:"contents"`
			}
			if json.Unmarshal(read.Member("result"), &r) != nil || len(r.Contents) != 1 {
				t.Fatalf("run %d: read %s: %.400s", run, a.shownURI(), read)
			}
			c := r.Contents[0]
			if !bytes.Equal([]byte(c.Text), a.html(t, root)) {
				t.Errorf("run %d: %s reads %d bytes that are not %s's own mcp-app.html (%d bytes)", run, a.shownURI(), len(c.Text), a.pkg, len(a.html(t, root)))
			}
			if c.URI != a.shownURI() || c.MimeType != "text/html;profile=mcp-app" {
				t.Errorf("run %d: %s's contents: uri %q, mimeType %q", run, a.shownURI(), c.URI, c.MimeType)
			}
		}

		// The system monitor's app polls by the tool's own name.
		stats := s.structured("poll-system-stats", `{}`)
		if stats["cpu"] == nil || stats["memory"] == nil || stats["timestamp"] == nil {
			t.Errorf("run %d: poll-system-stats by its own name: %v", run, stats)
		}
		code, msg, data := s.callTool("get-time", `{}`).Error(t)
		if code != -32602 || !strings.Contains(msg, "vanilla.get-time and react.get-time") || data["candidates"] == nil {
			t.Errorf("run %d: get-time by its own name: %d %q %v", run, code, msg, data)
		}
		r := s.callTool("react.get-time", `{}`)
		if content, _ := r.Result(t)["content"].([]any); len(content) != 1 || !isoTimeText.MatchString(fmt.Sprint(content[0].(map[string]any)["text"])) {
			t.Errorf("run %d: react.get-time: %s", run, r)
		}
		runs = append(runs, appsSession{tools.Member("result"), res.Member("result")})
		s.Stop(testutil.DefaultTimeout)
	}
	if !bytes.Equal(runs[0].tools, runs[1].tools) || !bytes.Equal(runs[0].resources, runs[1].resources) {
		t.Errorf("the lists differ after a restart:\n%s\n%s\n%s\n%s", runs[0].tools, runs[1].tools, runs[0].resources, runs[1].resources)
	}

	// A client that renders no apps is not shown the app-only tool; its
	// app-less calls still reach it.
	s := startRaw(t, cfg, "plain")
	wantNoTools(t, s.toolsList(), "sysmon.poll-system-stats")
	if stats := s.structured("sysmon.poll-system-stats", `{}`); stats["memory"] == nil {
		t.Errorf("sysmon.poll-system-stats for a client without apps: %v", stats)
	}
}

// The client's MCP Apps extension reaches the backends: over stdio as the
// client declared it, so that a server which lists its app's tools only
// to hosts that render apps (testbackend -app-gated) lists them to such a
// host through the gateway, and not to another client; over HTTP, where
// the backends are shared, they are declared it (docs/transparency.md,
// "What backends are told about the client"), and each client is shown
// what is its to see: the app-only tool only to a host that renders apps.
func TestAppsExtensionReachesBackends(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("gated", "-app-gated"))
	for _, c := range []struct {
		caps string
		want []string
	}{
		{uiCaps, []string{"gated.show", "gated.poll"}},
		{`{}`, nil},
	} {
		s, _ := initSession(t, startGateway(t, baseEnv(t), "--stdio", "--config", cfg), "e2e", c.caps)
		names := s.toolsList()
		wantTools(t, names, c.want...)
		if c.want == nil {
			wantNoTools(t, names, "gated.show", "gated.poll")
		}
		ext, _ := json.Marshal(s.structured("gated.stats", `{}`)["capabilities"].(map[string]any)["extensions"])
		if want := map[bool]string{true: `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`, false: "null"}[c.want != nil]; string(ext) != want {
			t.Errorf("client %s: the backend was declared extensions %s, want %s", c.caps, ext, want)
		}
		s.Stop(testutil.DefaultTimeout)
	}

	g := startHTTP(t, cfg)
	for _, c := range []struct {
		caps       string
		want, hide []string
	}{
		{uiCaps, []string{"gated.show", "gated.poll"}, nil},
		{`{}`, []string{"gated.show"}, []string{"gated.poll"}},
	} {
		sid := initRawCaps(t, g, c.caps)
		resp := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, nil)
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body := string(b)
		for _, name := range c.want {
			if !strings.Contains(body, `"name":"`+name+`"`) {
				t.Errorf("HTTP client %s: %s not listed: %s", c.caps, name, body)
			}
		}
		for _, name := range c.hide {
			if strings.Contains(body, `"name":"`+name+`"`) {
				t.Errorf("HTTP client %s: %s listed: %s", c.caps, name, body)
			}
		}
	}
}
