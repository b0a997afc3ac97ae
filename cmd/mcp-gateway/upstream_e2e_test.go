package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
)

// carol is a third user of the OP, for the upstream tests.
var carol = testop.User{ID: "u-carol", Username: "carol", Password: "carol-pw", Groups: []string{"team-a"}}

// upstreamGW is the gateway as an OAuth resource server of op in front of
// one remote testbackend (-http-audience urn:far) twice: far, reached by
// RFC 8693 token exchange at op (its exchange client), and pass, reached
// with the caller's own token when it is meant for urn:far.
func upstreamGW(t *testing.T, op *testop.OP) *teamsGW {
	t.Helper()
	url := startTestbackendHTTP(t, "-http-audience", "urn:far") + "/mcp"
	servers := []beServer{
		{Name: "far", URL: url, Upstream: map[string]any{"mode": "token_exchange", "token_url": op.Issuer + "oauth/token",
			"audience": "urn:far", "scopes": []string{"openid"}, "client_id": testop.ExchangeClientID, "client_secret_env": "GW_EXCHANGE"}},
		{Name: "pass", URL: url, Upstream: map[string]any{"mode": "passthrough", "audience": "urn:far"}},
	}
	// Names and tools/list that do not follow the client: the lists are
	// public but for what depends on the caller.
	gw := map[string]any{"policy": map[string]any{"rules": []any{}}, "strict_names": "false", "tools_mode": "full"}
	return startTeamsOf(t, op, gw, servers, "GW_EXCHANGE="+testop.ExchangeSecret)
}

// whoami calls tool (far.whoami or pass.whoami) on session sid with tok
// and returns the subject the server saw, or the error.
func (g *teamsGW) whoami(t *testing.T, tok, sid, tool string) (subject string, code int, msg string) {
	t.Helper()
	r := g.post(t, tok, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`)
	if code, msg := rpcError(r); code != 0 {
		return "", code, msg
	}
	res, _ := r.msg["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	subject, _ = sc["subject"].(string)
	if subject == "" {
		t.Fatalf("%s: %d %s %v", tool, r.status, r.body, r.msg)
	}
	return subject, 0, ""
}

// TestUpstreamTokenExchange (issue 36's acceptance, with zitadel's example
// OP as the identity provider and its RFC 8693 token exchange): alice and
// bob calling the same tool reach the server as themselves, each with a
// token exchanged once; their tokens, meant for the gateway, are never
// passed through to the server (pass refuses them); a hundred sessions
// opened at once by carol make one exchange; a call without a caller (the
// command line) is refused.
func TestUpstreamTokenExchange(t *testing.T) {
	op, err := testop.Start(alice, bob, carol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Close)
	g := upstreamGW(t, op)
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")
	aSid, bSid := g.session(t, aTok), g.session(t, bTok)

	if names := listNames(t, g.post(t, aTok, aSid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "tools"); !strings.Contains(strings.Join(names, " "), "far.whoami") {
		t.Fatalf("alice's tools: %v", names)
	}
	for _, c := range []struct{ tok, sid, want string }{{aTok, aSid, "u-alice"}, {bTok, bSid, "u-bob"}, {aTok, aSid, "u-alice"}} {
		if got, code, msg := g.whoami(t, c.tok, c.sid, "far.whoami"); got != c.want {
			t.Errorf("far.whoami: reached the server as %q (%d %s), want %q", got, code, msg, c.want)
		}
	}
	if n := op.Exchanges(); n != 2 {
		t.Errorf("%d exchanges, want 2: one per person, kept", n)
	}

	// A client of 2026-07-28 (no session): its own session upstream, and
	// the list, which depends on who asks, is private.
	msg, raw := g.post2026(t, bTok, "tools/list", "", `"cursor":null`)
	if res, _ := msg["result"].(map[string]any); res["cacheScope"] != "private" || !strings.Contains(raw, `"far.whoami"`) {
		t.Errorf("bob's tools/list of 2026-07-28: %s, want far.whoami, cacheScope private", raw)
	}
	if _, raw := g.post2026(t, bTok, "tools/call", "far.whoami", `"name":"far.whoami","arguments":{}`); !strings.Contains(raw, `"subject":"u-bob"`) {
		t.Errorf("bob's tools/call of 2026-07-28: %s", raw)
	}

	// Tokens meant for the gateway are not the server's to receive.
	if got, code, msg := g.whoami(t, aTok, aSid, "pass.whoami"); got != "" || code != -32003 || !strings.Contains(msg, "not meant for it") {
		t.Errorf("pass.whoami with alice's gateway token: %q %d %q, want refused", got, code, msg)
	}

	cTok := token(t, op, testop.ClientID, carol, g.resource, "openid", "mcp")
	before := op.Exchanges()
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for range n {
		wg.Go(func() {
			// Not g.post: its t.Fatal must not run on this goroutine.
			sid, err := rawPost(g.base+"/mcp", cTok, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			if err != nil {
				errs <- "initialize: " + err.Error()
				return
			}
			body := ""
			if _, err = rawPost(g.base+"/mcp", cTok, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"far.whoami","arguments":{}}}`, &body); err != nil || !strings.Contains(body, `"subject":"u-carol"`) {
				errs <- fmt.Sprintf("carol's whoami: %v %s", err, body)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if d := op.Exchanges() - before; d != 1 {
		t.Errorf("%d exchanges for %d concurrent first sessions of carol, want 1", d, n)
	}

	// The command line has no caller: refused, with the reason.
	out, errOut, code := runCLIEnv(t, baseEnv(t, "GW_EXCHANGE="+testop.ExchangeSecret), "call", "far.whoami", "--config", configOf(g.cmd.Args))
	if code == 0 || !strings.Contains(out+errOut, "each caller's own credential") {
		t.Errorf("call far.whoami from the command line: exit %d, %s %s; want the refusal", code, out, errOut)
	}
}

// rawPost POSTs one JSON-RPC message to u with a bearer token (and a
// session), and returns the session id it answers with; the answer's body
// goes to body when given. Any answer but 200 is an error.
func rawPost(u, tok, sid, msg string, body ...*string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(msg))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+tok)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if len(body) > 0 {
		*body[0] = string(raw)
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status + ": " + string(raw))
	}
	return resp.Header.Get("Mcp-Session-Id"), err
}

// configOf is the --config argument of a command line.
func configOf(args []string) string {
	if i := slices.Index(args, "--config"); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}
