package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// appScenario is one rendering of browser.mjs: an app, from an endpoint
// of the host's server (a server directly or a gateway), by its tool.
type appScenario struct {
	Label    string `json:"label"`
	Endpoint string `json:"endpoint"`
	Tool     string `json:"tool"`
	Kind     string `json:"kind"` // time (the basic apps) or sysmon
	app      exampleApp
	// ambiguous: the app's own call is refused (both basic servers
	// behind one gateway have get-time).
	ambiguous bool
}

// appOutcome is what browser.mjs saw of a scenario.
type appOutcome struct {
	Label       string `json:"label"`
	State       string `json:"state"`
	Error       string `json:"error"`
	URI         string `json:"uri"`
	ContentsURI string `json:"contentsURI"`
	HTMLSHA256  string `json:"htmlSHA256"`
	Initial     string `json:"initial"`
	After       string `json:"after"`
	Stats       *struct {
		Hostname, Platform, Uptime, Memory, Status string
		Drawn                                      bool
	} `json:"stats"`
	Calls []struct {
		Name    string `json:"name"`
		IsError *bool  `json:"isError"`
		Error   string `json:"error"`
	} `json:"calls"`
	Console    []string `json:"console"`
	Screenshot string   `json:"screenshot"`
}

// isoTimeText is the time get-time answers, as the apps show it.
var isoTimeText = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)

// TestAppsInChromium renders each example app in headless Chromium with
// ext-apps' AppBridge (testdata/apps/host.html) from each server directly
// and through the gateway over Streamable HTTP, and makes the app's own
// callServerTool round trip: get-time's button shows a new time, the
// system monitor draws the stats it polls. Through the gateway each app is
// its own server's HTML, and behaves as directly; with both basic servers
// behind one gateway, their get-time is ambiguous by its own name, and the
// app shows the refusal. Screenshots go to the artifact directory.
func TestAppsInChromium(t *testing.T) {
	t.Parallel()
	browser := findChromium(t)
	node := needNode(t)
	root := exampleAppPeers(t, "playwright-core/package.json", "@modelcontextprotocol/ext-apps/dist/src/app-bridge.js")

	// The servers over HTTP, for the host directly and for two gateways
	// as remote servers; the third gateway starts its own over stdio.
	direct := make(map[string]string) // app → base URL
	for _, a := range exampleApps {
		addr := freeAddr(t)
		_, port, _ := strings.Cut(addr, ":")
		startServer(t, baseEnv(t, "PORT="+port), node, filepath.Join(root, "node_modules", "@modelcontextprotocol", a.pkg, "dist", "index.js"))
		direct[a.name] = "http://" + addr
	}
	var all []beServer
	for _, a := range exampleApps {
		all = append(all, nodeServer(root, a.name, a.pkg, "--stdio"))
	}
	gwAll := startHTTP(t, httpConfig(t, map[string]any{"startup_timeout_ms": 60000, "first_start_wait_ms": 60000}, all...))
	for _, base := range direct {
		waitListening(t, strings.TrimPrefix(base, "http://"))
	}
	remote := func(names ...string) string {
		var servers []beServer
		for _, n := range names {
			servers = append(servers, beServer{Name: n, URL: direct[n] + "/mcp"})
		}
		return httpConfig(t, map[string]any{"startup_timeout_ms": 60000, "first_start_wait_ms": 60000}, servers...)
	}
	gwVanilla := startHTTP(t, remote("vanilla", "sysmon"))
	gwReact := startHTTP(t, remote("react", "sysmon"))

	// The host's server: the page, the npm modules it imports, and each
	// endpoint at /mcp/NAME, proxied (same origin for the page).
	targets := map[string]string{"gw-all": gwAll.base + "/mcp", "gw-vanilla": gwVanilla.base + "/mcp", "gw-react": gwReact.base + "/mcp"}
	for name, base := range direct {
		targets[name] = base + "/mcp"
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join("testdata", "apps"))))
	mux.Handle("/node_modules/", http.StripPrefix("/node_modules/", http.FileServer(http.Dir(filepath.Join(root, "node_modules")))))
	for name, target := range targets {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle("/mcp/"+name, &httputil.ReverseProxy{
			Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = u.Path },
			FlushInterval: -1, // event streams as they come
		})
	}
	hostSrv := httptest.NewServer(mux)
	t.Cleanup(hostSrv.Close)

	app := func(name string) exampleApp {
		for _, a := range exampleApps {
			if a.name == name {
				return a
			}
		}
		panic(name)
	}
	scenarios := []appScenario{
		{Label: "direct-vanilla", Endpoint: "/mcp/vanilla", Tool: "get-time", Kind: "time", app: app("vanilla")},
		{Label: "gateway-vanilla", Endpoint: "/mcp/gw-vanilla", Tool: "vanilla.get-time", Kind: "time", app: app("vanilla")},
		{Label: "direct-react", Endpoint: "/mcp/react", Tool: "get-time", Kind: "time", app: app("react")},
		{Label: "gateway-react", Endpoint: "/mcp/gw-react", Tool: "react.get-time", Kind: "time", app: app("react")},
		{Label: "direct-sysmon", Endpoint: "/mcp/sysmon", Tool: "get-system-info", Kind: "sysmon", app: app("sysmon")},
		{Label: "gateway-sysmon", Endpoint: "/mcp/gw-vanilla", Tool: "sysmon.get-system-info", Kind: "sysmon", app: app("sysmon")},
		{Label: "all-vanilla", Endpoint: "/mcp/gw-all", Tool: "vanilla.get-time", Kind: "time", app: app("vanilla"), ambiguous: true},
		{Label: "all-react", Endpoint: "/mcp/gw-all", Tool: "react.get-time", Kind: "time", app: app("react"), ambiguous: true},
		{Label: "all-sysmon", Endpoint: "/mcp/gw-all", Tool: "sysmon.get-system-info", Kind: "sysmon", app: app("sysmon")},
	}
	plan, _ := json.Marshal(map[string]any{"chromium": browser, "artifacts": artifactDir(t, root), "base": hostSrv.URL, "scenarios": scenarios})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "apps", "browser.mjs"), testutil.TempFile(t, "plan.json", string(plan)))
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(root, "node_modules"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var res struct {
		OK      bool         `json:"ok"`
		Error   string       `json:"error"`
		Results []appOutcome `json:"results"`
	}
	if jerr := json.Unmarshal(out, &res); err != nil || jerr != nil || !res.OK {
		t.Fatalf("browser.mjs: %v: %s\n%s", err, res.Error, out)
	}

	var shots []string
	byLabel := make(map[string]appOutcome)
	for i, o := range res.Results {
		sc := scenarios[i]
		byLabel[o.Label] = o
		shots = append(shots, o.Screenshot)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("%s: "+format+"\n(console: %s)", append([]any{sc.Label}, append(args, strings.Join(o.Console, "\n  "))...)...)
		}
		if o.State != "rendered" || o.Error != "" {
			fail("state %q: %s", o.State, o.Error)
			continue
		}
		// The app is its own server's, whoever serves it.
		if sum := sha256.Sum256(sc.app.html(t, root)); o.HTMLSHA256 != hex.EncodeToString(sum[:]) {
			fail("the rendered HTML (%s, from %s) is not %s's own", o.HTMLSHA256, o.URI, sc.app.pkg)
		}
		wantURI := sc.app.uri
		if !strings.HasPrefix(sc.Label, "direct-") {
			wantURI = sc.app.shownURI()
		}
		if o.URI != wantURI || o.ContentsURI != wantURI {
			fail("UI %s (contents %s), want %s", o.URI, o.ContentsURI, wantURI)
		}
		switch sc.Kind {
		case "time":
			if !isoTimeText.MatchString(o.Initial) {
				fail("the tool's result shows %q, not a time", o.Initial)
			}
			if len(o.Calls) == 0 || o.Calls[0].Name != "get-time" {
				fail("the app's calls: %+v, want get-time", o.Calls)
				break
			}
			c := o.Calls[0]
			if sc.ambiguous {
				if o.After != "[ERROR]" || !strings.Contains(c.Error, "vanilla.get-time and react.get-time") {
					fail("get-time by its own name, ambiguous: shows %q, call %+v", o.After, c)
				}
			} else if !isoTimeText.MatchString(o.After) || o.After == o.Initial || c.Error != "" || c.IsError == nil || *c.IsError {
				fail("the app's get-time: shows %q (before %q), call %+v", o.After, o.Initial, c)
			}
		default:
			st := o.Stats
			if st == nil || st.Hostname == "--" || st.Platform == "--" || st.Uptime == "--" || !strings.HasSuffix(st.Memory, "%") || !st.Drawn || st.Status == "Error" {
				fail("the system monitor shows %+v", st)
			}
			ok := false
			for _, c := range o.Calls {
				if c.Name == "poll-system-stats" && c.Error == "" && c.IsError != nil && !*c.IsError {
					ok = true
				}
			}
			if !ok {
				fail("no poll-system-stats round trip: %+v", o.Calls)
			}
		}
	}
	// Directly and through the gateway the apps behave the same: the same
	// app, the same round trips (the checks above), the same kind of text.
	for _, a := range []string{"vanilla", "react", "sysmon"} {
		d, g := byLabel["direct-"+a], byLabel["gateway-"+a]
		if d.HTMLSHA256 != g.HTMLSHA256 || len(d.Calls) == 0 || len(g.Calls) == 0 || d.Calls[0].Name != g.Calls[0].Name || (d.Stats == nil) != (g.Stats == nil) {
			t.Errorf("%s directly and through the gateway differ:\n%+v\n%+v", a, d, g)
		}
	}
	t.Logf("screenshots: %s", strings.Join(shots, ", "))
}
