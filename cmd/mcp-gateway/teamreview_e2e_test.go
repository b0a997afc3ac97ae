package main

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
)

// TestUpstreamTokensNeverLogged (an outside review of issue 36): the
// binary with debug logging, callers reaching a server by token exchange
// and one refused passthrough, another person's session id, a sessionless
// call: neither the gateway's stderr nor its audit log holds a token —
// the callers' own, or one exchanged for them (every token the OP issues
// is a JWT, "eyJ…").
func TestUpstreamTokensNeverLogged(t *testing.T) {
	op, err := testop.Start(alice, bob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Close)
	url := startTestbackendHTTP(t, "-http-audience", "urn:far") + "/mcp"
	servers := []beServer{
		{Name: "far", URL: url, Upstream: map[string]any{"mode": "token_exchange", "token_url": op.Issuer + "oauth/token",
			"audience": "urn:far", "scopes": []string{"openid"}, "client_id": testop.ExchangeClientID, "client_secret_env": "GW_EXCHANGE"}},
		{Name: "pass", URL: url, Upstream: map[string]any{"mode": "passthrough", "audience": "urn:far"}},
	}
	gw := map[string]any{"policy": map[string]any{"rules": []any{}}, "strict_names": "false", "tools_mode": "full"}
	g := startTeamsDebug(t, op, gw, servers, "GW_EXCHANGE="+testop.ExchangeSecret)

	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")
	aSid, bSid := g.session(t, aTok), g.session(t, bTok)
	for _, c := range []struct{ tok, sid, want string }{{aTok, aSid, "u-alice"}, {bTok, bSid, "u-bob"}} {
		if got, code, msg := g.whoami(t, c.tok, c.sid, "far.whoami"); got != c.want {
			t.Fatalf("far.whoami: %q (%d %s), want %q", got, code, msg, c.want)
		}
	}
	if got, code, msg := g.whoami(t, aTok, aSid, "pass.whoami"); got != "" || code != -32003 || strings.Contains(msg, aTok) {
		t.Errorf("pass.whoami with alice's gateway token: %q %d %q, want refused without the token", got, code, msg)
	}
	// bob's session id with alice's token: not found, and nothing of bob's.
	if r := g.post(t, aTok, bSid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"far.whoami","arguments":{}}}`); r.status != 404 || strings.Contains(r.body, "u-bob") {
		t.Errorf("alice with bob's session id: %d %s, want 404", r.status, r.body)
	}
	if _, raw := g.post2026(t, bTok, "tools/call", "far.whoami", `"name":"far.whoami","arguments":{}`); !strings.Contains(raw, `"subject":"u-bob"`) {
		t.Errorf("bob's sessionless call: %s", raw)
	}

	audit, err := os.ReadFile(g.audit)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d bytes of stderr, %d of the audit log", len(g.stderr.String()), len(audit))
	jwt := regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}`)
	for name, text := range map[string]string{"stderr": g.stderr.String(), "the audit log": string(audit)} {
		if text == "" {
			t.Errorf("%s is empty: nothing was checked", name)
		}
		for _, tok := range []string{aTok, bTok} {
			if strings.Contains(text, tok) {
				t.Errorf("%s holds a caller's token", name)
			}
		}
		if m := jwt.FindString(text); m != "" {
			t.Errorf("%s holds a JWT: %.20s…", name, m)
		}
	}
	if !strings.Contains(g.stderr.String(), "level=DEBUG") && !strings.Contains(g.stderr.String(), "DBG") {
		t.Errorf("no debug line in stderr: the test did not log at debug")
	}
}

// startTeamsDebug is startTeamsOf with the gateway run with --debug.
func startTeamsDebug(t *testing.T, op *testop.OP, gw map[string]any, servers []beServer, env ...string) *teamsGW {
	t.Helper()
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"
	extra := map[string]any{
		"http": map[string]any{
			"auth": "oauth",
			"oauth": map[string]any{
				"resource": resource,
				"issuers": []map[string]any{{"issuer": op.Issuer, "introspection_url": op.Issuer + "oauth/introspect",
					"client_id": testop.GatewayClientID, "client_secret_env": "GW_INTROSPECT"}},
				"scopes": []string{"mcp"},
			},
		},
		"audit": map[string]any{"path": filepath.Join(t.TempDir(), "audit.jsonl")},
	}
	for k, v := range gw {
		extra[k] = v
	}
	cfg := httpConfig(t, extra, servers...)
	cmd := exec.Command(gatewayBin, "--transport", "http", "--listen", addr, "--config", cfg, "--debug")
	cmd.Env = baseEnv(t, append(env, "GW_INTROSPECT="+testop.GatewaySecret)...)
	return &teamsGW{httpGW: startHTTPCmd(t, cmd), resource: resource, audit: extra["audit"].(map[string]any)["path"].(string)}
}

// TestWeakStateKeyWarns: every caller holds values sealed with the state
// key (a sealed session id, a per_user_login link), and AES-GCM tells an
// offline guess right from wrong; a short key is guessed, and with it
// sign-in links and flows for any person are forged. serve-http warns of a
// key under 32 bytes, naming the variable and never the key, and runs on
// (deployments of earlier versions keep working); a long one is not
// warned of.
func TestWeakStateKeyWarns(t *testing.T) {
	cfg := httpConfig(t, map[string]any{"http": map[string]any{"state_key_env": "GW_STATE_KEY"}}, tb("a"))
	const weak = "changeme"
	g := startHTTPEnv(t, cfg, baseEnv(t, "GW_STATE_KEY=0123456789abcdef0123456789abcdef, "+weak))
	if s := g.stderr.String(); !strings.Contains(s, "GW_STATE_KEY") || !strings.Contains(s, "32 bytes") || strings.Contains(s, weak) {
		t.Errorf("a key of %d bytes (the second): stderr\n%s\nwant a warning naming GW_STATE_KEY, without the key", len(weak), s)
	}
	strong := startHTTPEnv(t, cfg, baseEnv(t, "GW_STATE_KEY=0123456789abcdef0123456789abcdef"))
	if s := strong.stderr.String(); strings.Contains(s, "32 bytes") {
		t.Errorf("a key of 32 bytes: stderr\n%s\nwant no warning", s)
	}
}

// dashboardSignOut signs the bearer of tok out of server with the
// dashboard's button.
func dashboardSignOut(t *testing.T, g *teamsGW, tok, server string) {
	t.Helper()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(dashboardAs(t, g, tok))
	if csrf == nil {
		t.Fatal("the dashboard has no form")
	}
	req, _ := http.NewRequest(http.MethodPost, g.base+"/upstream/logout", strings.NewReader(url.Values{"csrf": {csrf[1]}, "server": {server}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out of %s on the dashboard: %d", server, resp.StatusCode)
	}
}

// TestUpstreamSignOutForgeryRefused: the dashboard's sign-out (POST
// /upstream/logout) is refused from another site or origin, and without the
// page's form token, even with the person's own bearer token (a browser
// sends what it holds); alice stays signed in through all of them; her own
// form signs her out, and nothing is redirected off the gateway. The
// callback's answers redirect nowhere either (no open redirect).
func TestUpstreamSignOutForgeryRefused(t *testing.T) {
	t.Parallel()
	op := startOP(t)
	up := newUserUpstream(t)
	g, _ := startPerUser(t, op, up, t.TempDir())
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	aSID := g.session(t, aTok)
	call := func() mcpReply {
		return g.post(t, aTok, aSID, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"people.whoami","arguments":{}}}`)
	}
	newBrowser(t).signIn(signInError(t, call()), "ALICE")
	if got := upstreamUser(call()); got != "ALICE" {
		t.Fatalf("alice after signing in: %q", got)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(dashboardAs(t, g, aTok))
	if csrf == nil {
		t.Fatal("the dashboard has no form")
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		name, csrf, server string
		header             [2]string
		want               int
	}{
		{"from another site", csrf[1], "people", [2]string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"from a sibling site", csrf[1], "people", [2]string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"from another origin", csrf[1], "people", [2]string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"without the form's token", "", "people", [2]string{"Sec-Fetch-Site", "same-origin"}, http.StatusForbidden},
		{"with another token", "x" + csrf[1], "people", [2]string{"Sec-Fetch-Site", "same-origin"}, http.StatusForbidden},
		{"of a server that is not per person", csrf[1], "nope", [2]string{"Sec-Fetch-Site", "same-origin"}, http.StatusBadRequest},
	} {
		req, _ := http.NewRequest(http.MethodPost, g.base+"/upstream/logout", strings.NewReader(url.Values{"csrf": {c.csrf}, "server": {c.server}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+aTok)
		req.Header.Set(c.header[0], c.header[1])
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("sign-out %s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
		if got := upstreamUser(call()); got != "ALICE" {
			t.Fatalf("after a sign-out %s, alice's call: %q, want still ALICE", c.name, got)
		}
	}
	for _, q := range []string{"error=access_denied&redirect_uri=https://evil.example", "code=x&state=y&redirect_uri=https://evil.example"} {
		resp, err := noFollow.Get(g.base + "/upstream/callback?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("callback ?%s: %d, Location %q", q, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	dashboardSignOut(t, g, aTok, "people")
	signInError(t, call())
}
