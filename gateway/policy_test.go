package gateway

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/answer/answertest"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// policyGW is a Gateway over real testbackend children whose HTTP front
// serves each request as the principal its X-Who header names, as the
// HTTP guard would have authenticated it: alice and bob, each always the
// same principal. Under its policy team-a (alice) sees server a and the
// answer tools (gateway.answer*), team-b (bob) server b.
type policyGW struct {
	t    *testing.T
	url  string
	gw   *Gateway
	fake *answertest.Server // the Responses API the answer tools call

	httpOptions HTTPOptions // the front's (set by newPolicyGWFront)

	mu      sync.Mutex
	denials []Denial
}

// The callers: alice2 is alice (the same key) with a token whose claims
// no longer put her in team-a; dan is another of team-a; token is every
// holder of the shared token, here in team-a ("" is nobody: no principal).
var policyCallers = map[string]*authn.Principal{
	"alice":  {Key: "alice@test", Identity: policy.Identity{Auth: "oauth", Subject: "alice", Groups: []string{"team-a"}}},
	"alice2": {Key: "alice@test", Identity: policy.Identity{Auth: "oauth", Subject: "alice"}},
	"bob":    {Key: "bob@test", Identity: policy.Identity{Auth: "oauth", Subject: "bob", Groups: []string{"team-b"}}},
	"carol":  {Key: "carol@test", Identity: policy.Identity{Auth: "oauth", Subject: "carol", Groups: []string{"b-app"}}},
	"dan":    {Key: "dan@test", Identity: policy.Identity{Auth: "oauth", Subject: "dan", Groups: []string{"team-a"}}},
	"token":  {Key: authn.Token([]byte("t")).Key, Identity: policy.Identity{Auth: "token", Groups: []string{"team-a"}}},
}

func newPolicyGW(t *testing.T, mutate func(*config.Config), servers ...config.Server) *policyGW {
	t.Helper()
	return newPolicyGWFront(t, HTTPOptions{}, mutate, servers...)
}

// newPolicyGWFront is newPolicyGW with an HTTP front of opts.
func newPolicyGWFront(t *testing.T, opts HTTPOptions, mutate func(*config.Config), servers ...config.Server) *policyGW {
	t.Helper()
	pol, err := policy.Compile([]policy.Rule{
		{Name: "team-a", When: `"team-a" in groups`, Allow: []string{"a", "gateway.answer*"}},
		{Name: "team-b", When: `"team-b" in groups`, Allow: []string{"b"}},
		{Name: "b-app", When: `"b-app" in groups`, Allow: []string{"b.show"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	g := &policyGW{t: t, httpOptions: opts, fake: answertest.New(answertest.Respond("m", answertest.Message("An answer.")))}
	t.Cleanup(g.fake.Close)
	cfg := config.Defaults()
	cfg.Servers = servers
	cfg.OpenAI.BaseURL, cfg.APIKey = g.fake.URL, "k"
	if mutate != nil {
		mutate(cfg)
	}
	mgr := backends.New(backends.Options{Servers: servers, DefaultTimeout: 10 * time.Second, StartupTimeout: 10 * time.Second})
	gw := New(Options{
		Config: cfg, Backends: mgr, Policy: pol,
		Answer: answer.New(answer.Options{Config: cfg}),
		OnDeny: func(d Denial) {
			g.mu.Lock()
			g.denials = append(g.denials, d)
			g.mu.Unlock()
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { mgr.Close() })
	t.Cleanup(cancel)
	mgr.Start(ctx)
	g.gw = gw
	front := gw.NewHTTPFront(g.httpOptions)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		front.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), policyCallers[r.Header.Get("X-Who")])))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(front.Close)
	g.url = srv.URL
	return g
}

// denied reports whether a denial of name to who was reported.
func (g *policyGW) denied(who, kind, name, server string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range g.denials {
		if d.Identity == policyCallers[who].Key && d.Kind == kind && d.Name == name && d.Server == server {
			return true
		}
	}
	return false
}

// send POSTs body to path as who with headers, and returns the status and
// the answer: the JSON body, or the event stream's last message.
func (g *policyGW) send(who, path string, hdr map[string]string, body string) (int, http.Header, string) {
	g.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Who", who)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				last = bytes.Clone(d)
			}
		}
		data = last
	}
	return resp.StatusCode, resp.Header, string(data)
}

// session opens a 2025-11-25 session as who; it returns a func that
// sends one message on it.
func (g *policyGW) session(who string) func(body string) string {
	g.t.Helper()
	return g.sessionCaps(who, `{}`)
}

// sessionCaps is session with the client capabilities caps.
func (g *policyGW) sessionCaps(who, caps string) func(body string) string {
	g.t.Helper()
	_, send := g.sessionOf(who, caps)
	return send
}

// sessionOf is sessionCaps that also returns the session's id.
func (g *policyGW) sessionOf(who, caps string) (id string, send func(body string) string) {
	g.t.Helper()
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	status, h, body := g.send(who, "/mcp", hdr, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"policy","version":"1"}}}`)
	if status != http.StatusOK || h.Get(sessionIDHeader) == "" {
		g.t.Fatalf("initialize as %s: %d %s", who, status, body)
	}
	hdr[sessionIDHeader] = h.Get(sessionIDHeader)
	g.send(who, "/mcp", hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return hdr[sessionIDHeader], func(body string) string {
		g.t.Helper()
		_, _, out := g.send(who, "/mcp", hdr, body)
		return out
	}
}

// meta2026 is the _meta of a request of 2026-07-28 from a client that can
// be asked for samplings and elicitations.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"policy","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}}}`

// call2026 POSTs a tools/call of 2026-07-28 as who: params are its
// params without _meta.
func (g *policyGW) call2026(who, tool, params string) string {
	g.t.Helper()
	return g.request2026(who, "tools/call", tool, params)
}

// request2026 POSTs a request of 2026-07-28 as who: name is what its
// Mcp-Name header carries, params its params without _meta.
func (g *policyGW) request2026(who, method, name, params string) string {
	g.t.Helper()
	_, _, out := g.send(who, "/mcp", map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name},
		`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+`,`+meta2026+`}}`)
	return out
}

func toolsCall(id int, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// TestPolicyAnswerTools (issue 32): the answer tools are the gateway's own
// tools in the policy (gateway.answer, gateway.answer_*): a caller no rule
// allows them to does not see them in tools/list and gets not-found for
// each, over MCP in both eras, through REST and through lazy mode's
// call_tool, and the Responses API is never called for it; the refusal is
// reported. A caller the policy allows them to gets the answer. They used
// to be called for anyone: callTool ran them before resolving the name.
func TestPolicyAnswerTools(t *testing.T) {
	g := newPolicyGW(t, func(c *config.Config) { c.Gateway.ToolsMode = "lazy" }, testServer("a"), testServer("b"))
	const args = `{"query":"what is new?"}`

	bob := g.session("bob")
	if list := bob(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); strings.Contains(list, `"answer`) || !strings.Contains(list, `"gateway.call_tool"`) {
		t.Errorf("bob's tools/list: %s", list)
	}
	for i, name := range []string{"answer", "answer_detailed", "answer_quick"} {
		if out := bob(toolsCall(10+i, name, args)); !strings.Contains(out, `"code":-32602`) || !strings.Contains(out, "Tool not found: "+name) {
			t.Errorf("bob calls %s: %s", name, out)
		}
	}
	if out := bob(toolsCall(20, "gateway.call_tool", `{"name":"answer","arguments":`+args+`}`)); !strings.Contains(out, "Tool not found: answer") {
		t.Errorf("bob's call_tool of answer: %s", out)
	}
	if out := bob(toolsCall(21, "gateway.describe_tool", `{"name":"answer"}`)); !strings.Contains(out, "Tool not found: answer") {
		t.Errorf("bob's describe_tool of answer: %s", out)
	}
	if out := g.call2026("bob", "answer", `"name":"answer","arguments":`+args); !strings.Contains(out, `"code":-32602`) || !strings.Contains(out, "Tool not found: answer") {
		t.Errorf("bob's 2026-07-28 call of answer: %s", out)
	}
	for _, body := range []string{`{"name":"answer","arguments":` + args + `}`, `{"server":"gateway","toolName":"answer","input":` + args + `}`} {
		if status, _, out := g.send("bob", "/mcp/call", nil, body); status != http.StatusNotFound || !strings.Contains(out, "TOOL_NOT_FOUND") {
			t.Errorf("bob's REST %s: %d %s", body, status, out)
		}
	}
	if n := g.fake.Count(); n != 0 {
		t.Errorf("bob's calls reached the Responses API %d times", n)
	}
	if !g.denied("bob", "tool", "answer", policy.Gateway) {
		t.Errorf("bob's refused answer was not reported: %+v", g.denials)
	}

	alice := g.session("alice")
	if list := alice(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); !strings.Contains(list, `"answer"`) {
		t.Errorf("alice's tools/list: %s", list)
	}
	if out := alice(toolsCall(2, "answer", args)); !strings.Contains(out, "An answer.") {
		t.Errorf("alice's answer: %s", out)
	}
}

// TestPolicyUIResources (issue 32): a ui:// resource of a server the
// policy hides is not found — listed or not, read or subscribed to — as
// the server's other resources; the refusal is reported. It used to be
// read from the backend the URI names, whoever asked.
func TestPolicyUIResources(t *testing.T) {
	g := newPolicyGW(t, nil, appServer("a"), appServer("b"))
	alice := g.session("alice")
	if out := alice(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ui://a/app/view.html"}}`); !strings.Contains(out, `"contents"`) {
		t.Fatalf("alice reads a's app: %s", out)
	}
	if list := alice(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`); strings.Contains(list, "ui://b/") {
		t.Errorf("alice's resources/list: %s", list)
	}
	for i, uri := range []string{"ui://b/app/view.html", "ui://b/unlisted.html", "ui://b/app/pages/7"} {
		for j, method := range []string{"resources/read", "resources/subscribe"} {
			out := alice(`{"jsonrpc":"2.0","id":` + strconv.Itoa(10+2*i+j) + `,"method":"` + method + `","params":{"uri":"` + uri + `"}}`)
			if !strings.Contains(out, `"code":-32602`) || strings.Contains(out, `"result"`) {
				t.Errorf("alice's %s of %s: %s", method, uri, out)
			}
		}
		if !g.denied("alice", "resource", uri, "b") {
			t.Errorf("alice's refused %s was not reported", uri)
		}
	}

	// A caller allowed an app's tool (b.show) but not its server's
	// resources loads that tool's app, as the host would directly, and
	// nothing else of b's.
	carol := g.session("carol")
	if out := carol(`{"jsonrpc":"2.0","id":30,"method":"resources/read","params":{"uri":"ui://b/app/view.html"}}`); !strings.Contains(out, `"contents"`) {
		t.Errorf("carol reads the app of b.show, which she may call: %s", out)
	}
	for i, uri := range []string{"ui://b/unlisted.html", "ui://b/app/pages/7"} {
		if out := carol(`{"jsonrpc":"2.0","id":` + strconv.Itoa(31+i) + `,"method":"resources/read","params":{"uri":"` + uri + `"}}`); !strings.Contains(out, `"code":-32602`) {
			t.Errorf("carol's resources/read of %s: %s", uri, out)
		}
	}
}
