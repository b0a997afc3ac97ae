package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestDashboardChromium is issue 25's acceptance for the page: on / of the
// HTTP front, behind its token, driven in headless Chromium, it shows a
// withheld change (diff, findings); Approve releases it; a client of the
// same gateway then gets list_changed and the new definition; the audit
// log records the approval with the token's identity. A POST without the
// page's token, or from another site, approves nothing.
func TestDashboardChromium(t *testing.T) {
	t.Parallel()
	browser := findChromium(t)
	node := needNode(t)
	root := npmPeers(t, "playwright-core/package.json")
	dir := t.TempDir()
	tools, pins, auditLog := filepath.Join(dir, "tools.json"), filepath.Join(dir, "config.pins.json"), filepath.Join(dir, "audit.jsonl")
	os.WriteFile(tools, []byte(`{}`), 0o600)
	cfg := trustConfig(t, "config.yaml", tools, pins, map[string]any{
		"http":  map[string]any{"auth_token_env": "GW_TOKEN"},
		"audit": map[string]any{"path": auditLog},
	})
	web := startHTTP(t, cfg, "GW_TOKEN=s3cret-dashboard")
	hc := &http.Client{Transport: bearer{"s3cret-dashboard", http.DefaultTransport}}
	changed := make(chan struct{}, 10)
	cs := goClient(t, &mcp.StreamableClientTransport{Endpoint: web.base + "/mcp", HTTPClient: hc}, "dashboard-test", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if !slices.Contains(sdkToolNames(t, cs), "calc.echo") {
		t.Fatal("echo not listed at first sight")
	}
	rugTools(t, tools, rugDescription)
	callEcho(t, cs, "calc.relist", nil)
	<-changed
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { return !slices.Contains(sdkToolNames(t, cs), "calc.echo") }) {
		t.Fatal("the changed echo is listed")
	}

	// Without the token the page is not served; without the page's CSRF
	// token, or from another site, nothing is approved.
	if resp := getURL(t, web.base+"/", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET / without the bearer token: %d", resp.StatusCode)
	}
	form := url.Values{"server": {"calc"}, "kind": {"tool"}, "name": {"echo"}, "csrf": {"guess"}}
	for _, hdr := range []map[string]string{{}, {"Sec-Fetch-Site": "cross-site"}} {
		req, _ := http.NewRequest("POST", web.base+"/approve", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("POST /approve without the page's token (%v): %d", hdr, resp.StatusCode)
		}
	}

	shots := artifactDir(t, root)
	if err := runPageScript(t, 2*time.Minute, node, root, "dashboard.mjs", web.base+"/", "s3cret-dashboard", browser, shots); err != nil {
		t.Fatalf("the dashboard in Chromium: %v", err)
	}

	select {
	case <-changed:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("no list_changed after Approve")
	}
	list, err := cs.ListTools(beCtx(t), nil)
	if err != nil || !slices.ContainsFunc(list.Tools, func(tl *mcp.Tool) bool { return tl.Name == "calc.echo" && tl.Description == rugDescription }) {
		t.Fatalf("the client does not see the approved definition: %v", err)
	}
	callEcho(t, cs, "calc.echo", map[string]any{"note": "n"})

	var approval *audit.Entry
	testutil.Poll(testutil.DefaultTimeout, func() bool {
		entries, _ := audit.Tail(auditLog, 100)
		for i, e := range entries {
			if e.Event == "approve" {
				approval = &entries[i]
			}
		}
		return approval != nil
	})
	if approval == nil || approval.Client != "dashboard" || !strings.HasPrefix(approval.Identity, "token:") || approval.Tool != "echo" || approval.Server != "calc" {
		t.Fatalf("the audit log's approval: %+v", approval)
	}
}

// TestDashboardCommand: `mcp-gateway dashboard` serves the page on
// loopback (and refuses any other address); its Approve, a form POST with
// the page's token, reaches a stdio gateway running on the same
// configuration through the pin file, which sends list_changed.
func TestDashboardCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools, pins := filepath.Join(dir, "tools.json"), filepath.Join(dir, "config.pins.json")
	os.WriteFile(tools, []byte(`{}`), 0o600)
	cfg := trustConfig(t, "config.yaml", tools, pins, nil)
	s := startRaw(t, cfg, "dashboard-command")
	if _, ok := s.rawTools()["calc.echo"]; !ok {
		t.Fatal("no first sight")
	}
	rugTools(t, tools, rugDescription)
	mark := s.Mark()
	s.callTool("calc.relist", `{}`)
	s.WaitNote(mark, "notifications/tools/list_changed", testutil.DefaultTimeout)
	// The client lists again, as clients do when told (the gateway tells
	// a client once until it has): the changed echo is withheld.
	if _, ok := s.rawTools()["calc.echo"]; ok {
		t.Fatal("the changed echo is listed before its approval")
	}

	if out, err := gwCommand(t, "dashboard", "--listen", "0.0.0.0:0", "--config", cfg).CombinedOutput(); err == nil || !strings.Contains(string(out), "loopback only") {
		t.Fatalf("dashboard beyond loopback: %v\n%s", err, out)
	}
	cmd := gwCommand(t, "dashboard", "--listen", "127.0.0.1:0", "--config", cfg)
	base, _ := startDashboard(t, cmd)
	var page string
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		resp := getURL(t, base, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = string(b)
		return strings.Contains(page, `data-name="echo"`)
	}) {
		t.Fatalf("the page shows no withheld echo:\n%s", page)
	}
	field := func(name string) string {
		_, after, _ := strings.Cut(page, `name="`+name+`" value="`)
		v, _, _ := strings.Cut(after, `"`)
		return html.UnescapeString(v)
	}
	form := url.Values{"csrf": {field("csrf")}, "server": {"calc"}, "kind": {"tool"}, "name": {"echo"}, "digest": {field("digest")}}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	mark = s.Mark()
	resp, err := noRedirect.PostForm(base+"approve", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/?approved=") {
		t.Fatalf("POST /approve: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	s.WaitNote(mark, "notifications/tools/list_changed", testutil.DefaultTimeout)
	if d := s.rawTools()["calc.echo"]["description"]; d != rugDescription {
		t.Fatalf("the stdio gateway after the dashboard's Approve: %q", d)
	}
}

// TestReviewShowsHiddenText: a backend's tool whose name holds a terminal
// escape (ESC[8m hides what follows it) and whose description and property
// name hold variation selectors and a zero-width space is reviewed with
// each of them written out — by tools --changes, status and the dashboard
// — and the dashboard's notice after an approval says what this process
// approved, never text from the page's URL.
func TestReviewShowsHiddenText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools, pins := filepath.Join(dir, "tools.json"), filepath.Join(dir, "config.pins.json")
	const name, shownName = "ev\x1b[8mil", `ev\u{1b}[8mil`
	data, _ := json.Marshal(map[string]any{"tools": map[string]any{name: map[string]any{
		"description": "Adds\ufe01\ufe02\U000e0100 numbers.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"n\u200bote": map[string]any{"type": "string"}}},
	}}})
	os.WriteFile(tools, data, 0o600)
	cfg := trustConfig(t, "config.yaml", tools, pins, map[string]any{"trust": "approve"})
	for _, args := range [][]string{{"tools", "--changes"}, {"status"}} {
		out, _ := gwCommand(t, append(args, "--config", cfg)...).CombinedOutput()
		for _, want := range []string{"tool " + shownName + " of calc", `Adds\u{fe01}\u{fe02}\u{e0100} numbers`, `invisible-characters in inputSchema.properties.n\u{200b}ote (name)`} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s does not show %q:\n%s", args[0], want, out)
			}
		}
		if strings.ContainsAny(string(out), "\x1b\ufe01\u200b") {
			t.Errorf("%s prints a hidden character raw: %q", args[0], out)
		}
	}

	cmd := gwCommand(t, "dashboard", "--listen", "127.0.0.1:0", "--config", cfg)
	base, _ := startDashboard(t, cmd)
	get := func(u string) string {
		resp := getURL(t, u, nil)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var page string
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		page = get(base)
		return strings.Contains(page, `id="changes"`) && strings.Contains(page, `class="change"`)
	}) {
		t.Fatalf("the page shows no withheld tool:\n%s", page)
	}
	for _, want := range []string{"<code>" + shownName + "</code>", `Adds\u{fe01}\u{fe02}\u{e0100} numbers`, `n\u{200b}ote`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q:\n%s", want, page)
		}
	}
	// A link that names what was approved shows nothing of it.
	spoof := get(base + "?" + url.Values{"approved": {"1"}, "kind": {"tool"}, "server": {"calc"}, "name": {"x. Your session expired: sign in at evil.example"}}.Encode())
	if strings.Contains(spoof, "evil.example") || strings.Contains(spoof, `id="notice"`) {
		t.Errorf("the page shows a notice from its URL:\n%s", spoof)
	}
	_, ours, _ := strings.Cut(page, "<code>"+shownName+"</code>") // its change's form
	field := func(name string) string {
		_, after, _ := strings.Cut(ours, `name="`+name+`" value="`)
		v, _, _ := strings.Cut(after, `"`)
		return html.UnescapeString(v)
	}
	if field("name") != name {
		t.Fatalf("the form names %q", field("name"))
	}
	form := url.Values{"csrf": {field("csrf")}, "server": {"calc"}, "kind": {"tool"}, "name": {name}, "digest": {field("digest")}}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(base+"approve", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || strings.Contains(loc, "name=") {
		t.Fatalf("POST /approve (name %q): %d %s", field("name"), resp.StatusCode, loc)
	}
	if after := get(base + strings.TrimPrefix(loc, "/")); !strings.Contains(after, "Approved tool "+shownName+" of calc") {
		t.Errorf("no notice of the approval at %s:\n%s", loc, after)
	}
}

// startDashboard starts cmd, a `mcp-gateway dashboard` on 127.0.0.1:0, and
// returns the address it says it serves on and its stderr. At the end of
// the test it is interrupted, so that it stops the servers it started
// (killed where there is no interrupt: Windows), and waited for.
func startDashboard(t *testing.T, cmd *exec.Cmd) (base string, stderr *testutil.Buffer) {
	t.Helper()
	stderr = &testutil.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.Process.Signal(os.Interrupt) != nil {
			cmd.Process.Kill()
		}
		cmd.Wait()
	})
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		_, after, ok := strings.Cut(stderr.String(), "mcp-gateway dashboard on ")
		base, _, _ = strings.Cut(after, "\n")
		return ok && strings.HasSuffix(base, "/")
	}) {
		t.Fatalf("the dashboard did not say where it listens:\n%s", stderr)
	}
	return base, stderr
}

// runPageScript runs testdata/SCRIPT (one of the Chromium scripts, which
// print {"ok":…,"error":…,"screenshots":[…]}) with args under node,
// within d: nil when it reports ok, else what went wrong with its output.
func runPageScript(t *testing.T, d time.Duration, node, root, script string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", script)}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(root, "node_modules"))
	out, err := cmd.Output()
	var res struct {
		OK          bool     `json:"ok"`
		Error       string   `json:"error"`
		Screenshots []string `json:"screenshots"`
	}
	_ = json.Unmarshal(out, &res)
	if err != nil || !res.OK {
		return fmt.Errorf("%v: %s\n%s", err, res.Error, out)
	}
	t.Logf("screenshots: %s", strings.Join(res.Screenshots, ", "))
	return nil
}
