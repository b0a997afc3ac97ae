package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
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
// find_tools, in a list of 2026-07-28 (private) — calls their own, and
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
