package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callerListsGW is the gateway (tools_mode mode) as an OAuth resource
// server of op in front of one remote testbackend, far, reached by token
// exchange, whose tools/list names alice_only to alice's token and
// bob_only to bob's.
func callerListsGW(t *testing.T, op *testop.OP, mode string) *teamsGW {
	t.Helper()
	url := startTestbackendHTTP(t, "-http-audience", "urn:far", "-subject-tool", "u-alice=alice_only", "-subject-tool", "u-bob=bob_only") + "/mcp"
	servers := []beServer{{Name: "far", URL: url, Upstream: map[string]any{"mode": "token_exchange", "token_url": op.Issuer + "oauth/token",
		"audience": "urn:far", "scopes": []string{"openid"}, "client_id": testop.ExchangeClientID, "client_secret_env": "GW_EXCHANGE"}}}
	gw := map[string]any{"policy": map[string]any{"rules": []any{}}, "strict_names": "false", "tools_mode": mode}
	return startTeamsOf(t, op, gw, servers, "GW_EXCHANGE="+testop.ExchangeSecret)
}

// TestUpstreamListsPerCaller: each person is shown the tools of their own
// session of a server reached per caller — in tools/list, in lazy mode's
// find_tools, in a list of 2026-07-28 (private), in REST's GET /mcp/tools
// — calls their own, and
// the other's tool is not found; before, everyone was shown the first
// person's list.
func TestUpstreamListsPerCaller(t *testing.T) {
	op, err := testop.Start(alice, bob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Close)
	people := []struct {
		user       testop.User
		own, other string
	}{{alice, "far.alice_only", "far.bob_only"}, {bob, "far.bob_only", "far.alice_only"}}

	t.Run("full", func(t *testing.T) {
		g := callerListsGW(t, op, "full")
		for _, p := range people { // alice first: before, bob was shown her list
			tok := token(t, op, testop.ClientID, p.user, g.resource, "openid", "mcp")
			sid := g.session(t, tok)
			names := listNames(t, g.post(t, tok, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "tools")
			if !slices.Contains(names, p.own) || slices.Contains(names, p.other) || !slices.Contains(names, "far.whoami") {
				t.Errorf("%s's tools/list: %v, want %s and not %s", p.user.Username, names, p.own, p.other)
			}
			r := g.post(t, tok, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+p.own+`","arguments":{}}}`)
			if code, msg := rpcError(r); code != 0 || !strings.Contains(r.body+strings.Join(textOf(r), ""), strings.TrimPrefix(p.own, "far.")+" for u-"+p.user.Username) {
				t.Errorf("%s's call of %s: %d %s %v", p.user.Username, p.own, code, msg, r.msg)
			}
			r = g.post(t, tok, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+p.other+`","arguments":{}}}`)
			if code, msg := rpcError(r); code == 0 || !strings.Contains(msg, "not found") {
				t.Errorf("%s's call of the other's %s: %d %q %v, want not found", p.user.Username, p.other, code, msg, r.msg)
			}
			// REST: the same list.
			resp := getURL(t, g.base+"/mcp/tools", map[string]string{"Authorization": "Bearer " + tok})
			rest, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(rest), `"`+p.own+`"`) || strings.Contains(string(rest), `"`+p.other+`"`) {
				t.Errorf("%s's GET /mcp/tools: %d %s, want %s, not %s", p.user.Username, resp.StatusCode, rest, p.own, p.other)
			}
			// Sessionless, 2026-07-28: the same list, private.
			msg, raw := g.post2026(t, tok, "tools/list", "", `"cursor":null`)
			res, _ := msg["result"].(map[string]any)
			if res["cacheScope"] != "private" || !strings.Contains(raw, `"`+p.own+`"`) || strings.Contains(raw, `"`+p.other+`"`) {
				t.Errorf("%s's tools/list of 2026-07-28: %s, want %s, not %s, cacheScope private", p.user.Username, raw, p.own, p.other)
			}
		}
	})

	t.Run("lazy", func(t *testing.T) {
		g := callerListsGW(t, op, "lazy")
		for _, p := range people {
			tok := token(t, op, testop.ClientID, p.user, g.resource, "openid", "mcp")
			sid := g.session(t, tok)
			found := func(query string) string {
				r := g.post(t, tok, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"gateway.find_tools","arguments":{"query":"`+query+`"}}}`)
				if code, msg := rpcError(r); code != 0 {
					t.Fatalf("%s's find_tools: %d %s", p.user.Username, code, msg)
				}
				return strings.Join(textOf(r), "")
			}
			if got := found(strings.TrimPrefix(p.own, "far.")); !strings.Contains(got, p.own) {
				t.Errorf("%s's find_tools %s: %s", p.user.Username, p.own, got)
			}
			if got := found(strings.TrimPrefix(p.other, "far.")); strings.Contains(got, p.other) {
				t.Errorf("%s's find_tools finds the other's %s: %s", p.user.Username, p.other, got)
			}
			r := g.post(t, tok, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"gateway.call_tool","arguments":{"name":"`+p.other+`","arguments":{}}}}`)
			if code, msg := rpcError(r); code == 0 && !strings.Contains(strings.Join(textOf(r), ""), "not found") {
				t.Errorf("%s's call_tool of the other's %s: %d %q %v, want not found", p.user.Username, p.other, code, msg, r.msg)
			}
		}
	})
}

// textOf is the text of a tools/call result's content.
func textOf(r mcpReply) []string {
	res, _ := r.msg["result"].(map[string]any)
	content, _ := res["content"].([]any)
	var out []string
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			out = append(out, s)
		}
	}
	return out
}

// perSubjectServer is a remote MCP server that is a server of its own for
// each subject whose token (a JWT, read, not verified) reaches it: a tool
// one person's server adds is listed, and its list_changed sent, to that
// person's sessions only.
type perSubjectServer struct {
	mu    sync.Mutex
	bySub map[string]*mcp.Server
}

func (p *perSubjectServer) of(sub string) *mcp.Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bySub[sub] == nil {
		s := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
		addNop(s, "hello")
		p.bySub[sub] = s
	}
	return p.bySub[sub]
}

func addNop(s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
	})
}

// TestUpstreamListChangedPerCaller: a list_changed of one person's own
// session of a server reached per caller reaches that person's client,
// whose list has the new tool, and changes no other person's list. Before,
// the first person's list was everyone's: bob was shown alice's new tool,
// and never his own.
func TestUpstreamListChangedPerCaller(t *testing.T) {
	op, err := testop.Start(alice, bob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Close)
	far := &perSubjectServer{bySub: map[string]*mcp.Server{}}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return far.of(testutil.BearerSubject(r)) }, nil))
	t.Cleanup(hs.Close)
	servers := []beServer{{Name: "far", URL: hs.URL, Upstream: map[string]any{"mode": "token_exchange", "token_url": op.Issuer + "oauth/token",
		"audience": "urn:far", "scopes": []string{"openid"}, "client_id": testop.ExchangeClientID, "client_secret_env": "GW_EXCHANGE"}}}
	g := startTeamsOf(t, op, map[string]any{"policy": map[string]any{"rules": []any{}}, "strict_names": "false", "tools_mode": "full"},
		servers, "GW_EXCHANGE="+testop.ExchangeSecret)

	client := func(u testop.User) (*mcp.ClientSession, chan struct{}) {
		hc := &http.Client{Transport: bearer{token(t, op, testop.ClientID, u, g.resource, "openid", "mcp"), http.DefaultTransport}}
		changed := make(chan struct{}, 10)
		cs := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp", HTTPClient: hc}, u.Username, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		return cs, changed
	}
	aCS, aChanged := client(alice) // alice's session first: before, hers was everyone's list
	if got := sdkToolNames(t, aCS); !slices.Contains(got, "far.hello") {
		t.Fatalf("alice's tools: %v", got)
	}
	bCS, bChanged := client(bob)
	if got := sdkToolNames(t, bCS); !slices.Contains(got, "far.hello") {
		t.Fatalf("bob's tools: %v", got)
	}

	wait := func(who string, ch chan struct{}, cs *mcp.ClientSession, tool string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(testutil.DefaultTimeout):
			t.Fatalf("no list_changed for %s", who)
		}
		if !testutil.Poll(testutil.DefaultTimeout, func() bool { return slices.Contains(sdkToolNames(t, cs), tool) }) {
			t.Fatalf("%s's tools lack %s after their list_changed: %v", who, tool, sdkToolNames(t, cs))
		}
	}
	addNop(far.of("u-alice"), "alice_new")
	wait("alice", aChanged, aCS, "far.alice_new")
	// bob's change comes after alice's (the gateway handles them in
	// order): once his list has his, what alice's did to it is done.
	addNop(far.of("u-bob"), "bob_new")
	wait("bob", bChanged, bCS, "far.bob_new")
	if got := sdkToolNames(t, bCS); slices.Contains(got, "far.alice_new") {
		t.Errorf("bob is shown alice's new tool: %v", got)
	}
	if got := sdkToolNames(t, aCS); slices.Contains(got, "far.bob_new") {
		t.Errorf("alice is shown bob's new tool: %v", got)
	}
}
