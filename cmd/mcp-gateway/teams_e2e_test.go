package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
)

// The users of the OpenID provider the team tests sign in at.
var (
	alice = testop.User{ID: "u-alice", Username: "alice", Password: "alice-pw", Groups: []string{"team-a"}}
	bob   = testop.User{ID: "u-bob", Username: "bob", Password: "bob-pw", Groups: []string{"team-b"}}
)

// startOP starts a real OpenID provider (testop) for the test.
func startOP(t *testing.T) *testop.OP {
	t.Helper()
	o, err := testop.Start(alice, bob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}

// teamsGW is the gateway as an OAuth resource server of op, on a fixed
// loopback address (its resource URL is in its configuration): servers a
// (prompts, resources) and b, team-a's policy showing a, team-b's b; every
// request needs the scope mcp, a.slow needs mcp:slow too.
type teamsGW struct {
	*httpGW
	resource string
	audit    string // the audit log
}

func startTeams(t *testing.T, op *testop.OP, gw map[string]any, env ...string) *teamsGW {
	t.Helper()
	return startTeamsOf(t, op, gw, []beServer{tb("a", "-prompts", "-resources"), tb("b")}, env...)
}

// startTeamsOf is startTeams in front of servers (a and b).
func startTeamsOf(t *testing.T, op *testop.OP, gw map[string]any, servers []beServer, env ...string) *teamsGW {
	t.Helper()
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"
	http := map[string]any{
		"auth": "oauth",
		"oauth": map[string]any{
			"resource": resource,
			"issuers": []map[string]any{{"issuer": op.Issuer, "introspection_url": op.Issuer + "oauth/introspect",
				"client_id": testop.GatewayClientID, "client_secret_env": "GW_INTROSPECT"}},
			"scopes":      []string{"mcp"},
			"tool_scopes": []map[string]any{{"tools": []string{"a.slow"}, "scopes": []string{"mcp:slow"}}},
		},
	}
	extra := map[string]any{
		"http": http,
		"policy": map[string]any{"rules": []map[string]any{
			{"name": "team-a", "when": `"team-a" in groups`, "allow": []string{"a"}},
			// An opaque token's introspection carries no groups: bob is
			// known by his subject too.
			{"name": "team-b", "when": `"team-b" in groups || subject == "u-bob"`, "allow": []string{"b"}},
		}},
	}
	for k, v := range gw {
		extra[k] = v
	}
	if _, ok := extra["audit"]; !ok {
		extra["audit"] = map[string]any{"path": filepath.Join(t.TempDir(), "audit.jsonl")}
	}
	cfg := httpConfig(t, extra, servers...)
	g := startHTTPAt(t, addr, cfg, baseEnv(t, append(env, "GW_INTROSPECT="+testop.GatewaySecret)...))
	return &teamsGW{httpGW: g, resource: resource, audit: extra["audit"].(map[string]any)["path"].(string)}
}

// token signs user in at op for resource with scopes.
func token(t *testing.T, op *testop.OP, client string, u testop.User, resource string, scopes ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	tok, err := op.Token(ctx, client, u.Username, u.Password, resource, scopes...)
	if err != nil {
		t.Fatalf("sign-in of %s: %v", u.Username, err)
	}
	return tok
}

// mcpReply is one answer to a POST of one JSON-RPC request.
type mcpReply struct {
	status  int
	header  http.Header
	msg     map[string]any // the response, decoded from JSON or the event stream
	session string
	body    string // the body when it is not a response
}

// post sends one JSON-RPC message to /mcp with a bearer token (and a
// session), and reads its answer.
func (g *teamsGW) post(t *testing.T, tok, sid, body string) mcpReply {
	t.Helper()
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	if tok != "" {
		hdr["Authorization"] = "Bearer " + tok
	}
	resp := postMCP(t, g.base+"/mcp", sid, body, hdr)
	r := mcpReply{status: resp.StatusCode, header: resp.Header, session: resp.Header.Get("Mcp-Session-Id")}
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				raw = []byte(d)
			}
		}
	}
	if json.Unmarshal(raw, &r.msg) != nil {
		r.body = string(raw)
	}
	return r
}

// rest POSTs body to /mcp/call with a bearer token.
func (g *teamsGW) rest(t *testing.T, tok, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.base+"/mcp/call", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(raw)
}

// session opens a session with tok; it returns the session id.
func (g *teamsGW) session(t *testing.T, tok string) string {
	t.Helper()
	r := g.post(t, tok, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"team","version":"1"}}}`)
	if r.status != http.StatusOK || r.session == "" {
		t.Fatalf("initialize: %d %s %v", r.status, r.body, r.msg)
	}
	return r.session
}

// rpcError is a response's error code and message (0, "" for a result).
func rpcError(r mcpReply) (int, string) {
	e, _ := r.msg["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(code), msg
}

func listNames(t *testing.T, r mcpReply, member string) []string {
	t.Helper()
	res, ok := r.msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %d %s %v", r.status, r.body, r.msg)
	}
	var names []string
	for _, it := range res[member].([]any) {
		m := it.(map[string]any)
		if n, ok := m["name"].(string); ok && member != "resources" {
			names = append(names, n)
		} else {
			names = append(names, m["uri"].(string))
		}
	}
	return names
}

// TestTeamsOAuthPolicy (issue 26's acceptance, with a real OpenID
// provider): alice's token lists and calls what team-a's rule allows; bob's
// does not see a's tools, prompts or resources and gets not-found for them
// by every spelling — a.echo, a__echo, REST in either form — while his own
// work; an expired token, one for another audience, one from another
// issuer and one whose signature is wrong get 401 naming the metadata; a
// token without the scope every request needs gets 403, one without the
// scope a.slow needs 403 naming it (step-up); another principal cannot use
// alice's session; an opaque token is checked by introspection; bob's
// refused call is logged as a denial.
func TestTeamsOAuthPolicy(t *testing.T) {
	op := startOP(t)
	g := startTeams(t, op, nil)
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")

	aSid := g.session(t, aTok)
	wantTools(t, listNames(t, g.post(t, aTok, aSid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "tools"), "a.echo", "a.slow")
	wantNoTools(t, listNames(t, g.post(t, aTok, aSid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`), "tools"), "b.echo")
	if r := g.post(t, aTok, aSid, callMsg(4, "a.echo", `{"who":"alice"}`)); r.msg["result"] == nil {
		t.Fatalf("alice's a.echo: %d %s %v", r.status, r.body, r.msg)
	}
	if names := listNames(t, g.post(t, aTok, aSid, `{"jsonrpc":"2.0","id":5,"method":"prompts/list"}`), "prompts"); !slices.Contains(names, "a.greet") {
		t.Errorf("alice's prompts: %v", names)
	}

	bSid := g.session(t, bTok)
	bTools := listNames(t, g.post(t, bTok, bSid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "tools")
	wantTools(t, bTools, "b.echo")
	wantNoTools(t, bTools, "a.echo", "a.slow")
	if r := g.post(t, bTok, bSid, callMsg(3, "b.echo", `{}`)); r.msg["result"] == nil {
		t.Errorf("bob's b.echo: %v", r.msg)
	}
	for i, name := range []string{"a.echo", "a__echo", "a.nosuch"} {
		code, msg := rpcError(g.post(t, bTok, bSid, callMsg(10+i, name, `{}`)))
		if code != -32602 || msg != "Tool not found: "+name {
			t.Errorf("bob calls %s: %d %q, want -32602 Tool not found", name, code, msg)
		}
	}
	if p := listNames(t, g.post(t, bTok, bSid, `{"jsonrpc":"2.0","id":20,"method":"prompts/list"}`), "prompts"); len(p) != 0 {
		t.Errorf("bob's prompts: %v, want none", p)
	}
	if code, msg := rpcError(g.post(t, bTok, bSid, `{"jsonrpc":"2.0","id":21,"method":"prompts/get","params":{"name":"a.greet"}}`)); code != -32602 || !strings.Contains(msg, "not found") {
		t.Errorf("bob gets a.greet: %d %q", code, msg)
	}
	if r := listNames(t, g.post(t, bTok, bSid, `{"jsonrpc":"2.0","id":22,"method":"resources/list"}`), "resources"); len(r) != 0 {
		t.Errorf("bob's resources: %v, want none", r)
	}
	if code, _ := rpcError(g.post(t, bTok, bSid, `{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{"uri":"test://r1"}}`)); code != -32602 {
		t.Errorf("bob reads a's resource: %d, want -32602", code)
	}

	// REST, in both forms, and its list.
	for _, body := range []string{`{"name":"a.echo","arguments":{}}`, `{"server":"a","toolName":"echo","input":{}}`, `{"name":"a.nosuch"}`} {
		if resp, raw := g.rest(t, bTok, body); resp.StatusCode != http.StatusNotFound || !strings.Contains(raw, "TOOL_NOT_FOUND") {
			t.Errorf("bob's REST %s: %d %s", body, resp.StatusCode, raw)
		}
	}
	raw, _ := io.ReadAll(getURL(t, g.base+"/mcp/tools", map[string]string{"Authorization": "Bearer " + bTok}).Body)
	if !strings.Contains(string(raw), `"b.echo"`) || strings.Contains(string(raw), `"a.`) {
		t.Errorf("bob's REST tools: %s", raw)
	}

	// Alice's session is not bob's.
	if r := g.post(t, bTok, aSid, callMsg(30, "b.echo", `{}`)); r.status != http.StatusNotFound {
		t.Errorf("bob on alice's session: %d, want 404", r.status)
	}

	// Refused tokens: 401 naming the metadata.
	meta := `resource_metadata="` + strings.TrimSuffix(g.base, "/") + `/.well-known/oauth-protected-resource/mcp"`
	other := startOP(t)
	parts := strings.Split(aTok, ".")
	forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
	for name, tc := range map[string]struct{ tok, want string }{
		"no token":        {"", `Bearer scope="mcp", ` + meta},
		"expired":         {token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp", testop.ExpiredScope), `error="invalid_token"`},
		"other audience":  {token(t, op, testop.ClientID, alice, "https://other.example/mcp", "openid", "mcp"), `error="invalid_token"`},
		"other issuer":    {token(t, other, testop.ClientID, alice, g.resource, "openid", "mcp"), `error="invalid_token"`},
		"wrong signature": {forged, `error="invalid_token"`},
		"not a token":     {"garbage", `error="invalid_token"`},
	} {
		r := g.post(t, tc.tok, "", callMsg(1, "a.echo", `{}`))
		h := r.header.Get("WWW-Authenticate")
		if r.status != http.StatusUnauthorized || !strings.Contains(h, tc.want) || !strings.Contains(h, meta) {
			t.Errorf("%s: %d %q, want 401 with %s and %s", name, r.status, h, tc.want, meta)
		}
	}

	// Scopes: 403.
	noScope := token(t, op, testop.ClientID, alice, g.resource, "openid")
	r := g.post(t, noScope, "", callMsg(1, "a.echo", `{}`))
	if h := r.header.Get("WWW-Authenticate"); r.status != http.StatusForbidden || !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="mcp"`) {
		t.Errorf("without the scope mcp: %d %q, want 403 insufficient_scope scope=\"mcp\"", r.status, h)
	}
	r = g.post(t, aTok, aSid, callMsg(40, "a.slow", `{"ms":1}`))
	if h := r.header.Get("WWW-Authenticate"); r.status != http.StatusForbidden || !strings.Contains(h, `error="insufficient_scope"`) || !strings.Contains(h, `scope="mcp mcp:slow"`) {
		t.Errorf("a.slow without mcp:slow: %d %q, want 403 naming mcp mcp:slow", r.status, h)
	}
	slowTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp", "mcp:slow")
	if r := g.post(t, slowTok, aSid, callMsg(41, "a.slow", `{"ms":1}`)); r.msg["result"] == nil {
		t.Errorf("a.slow with mcp:slow, on the session of the same user: %d %s %v", r.status, r.body, r.msg)
	}

	// An opaque token, by introspection.
	opaque := token(t, op, testop.OpaqueClientID, bob, g.resource, "openid", "mcp")
	if r := g.post(t, opaque, g.session(t, opaque), callMsg(1, "b.echo", `{}`)); r.msg["result"] == nil {
		t.Errorf("bob's opaque token: %d %s %v", r.status, r.body, r.msg)
	}

	// The metadata.
	var doc struct {
		Resource string   `json:"resource"`
		Servers  []string `json:"authorization_servers"`
		Scopes   []string `json:"scopes_supported"`
	}
	resp := getURL(t, g.base+"/.well-known/oauth-protected-resource/mcp", nil)
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || doc.Resource != g.resource || len(doc.Servers) != 1 || doc.Servers[0] != op.Issuer ||
		!slices.Equal(doc.Scopes, []string{"mcp", "mcp:slow"}) {
		t.Errorf("metadata: %+v %v", doc, err)
	}

	// The refusals are in the audit log, with who and what.
	testutil.WaitFor(t, testutil.DefaultTimeout, "bob's refused requests in the audit log", func() bool {
		raw, _ := os.ReadFile(g.audit)
		var denied []string
		for _, line := range strings.Split(string(raw), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && e["event"] == "deny" && strings.HasPrefix(fmt.Sprint(e["identity"]), "u-bob@") {
				denied = append(denied, fmt.Sprint(e["kind"], " ", e["tool"], " ", e["server"]))
			}
		}
		return slices.Contains(denied, "tool a.echo a") && slices.Contains(denied, "prompt a.greet a") && slices.Contains(denied, "resource test://r1 a")
	})
}

// TestTeamsLazyPolicy: in lazy mode bob's find_tools never finds a's
// tools, and describe_tool and call_tool answer not-found for them.
func TestTeamsLazyPolicy(t *testing.T) {
	op := startOP(t)
	g := startTeams(t, op, map[string]any{"tools_mode": "lazy"})
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")
	sid := g.session(t, bTok)
	text := func(r mcpReply) string {
		res, _ := r.msg["result"].(map[string]any)
		content, _ := res["content"].([]any)
		if len(content) == 0 {
			t.Fatalf("no content: %v", r.msg)
		}
		return content[0].(map[string]any)["text"].(string)
	}
	found := text(g.post(t, bTok, sid, callMsg(2, "gateway.find_tools", `{"query":"echo"}`)))
	if !strings.Contains(found, `"b.echo"`) || strings.Contains(found, `"a.`) {
		t.Errorf("bob's find_tools: %s", found)
	}
	if all := text(g.post(t, bTok, sid, callMsg(3, "gateway.find_tools", `{"server":"a"}`))); strings.Contains(all, `"a.`) || strings.Contains(all, "Servers: a") {
		t.Errorf("bob's find_tools of server a: %s", all)
	}
	for i, c := range []struct{ tool, args string }{
		{"gateway.describe_tool", `{"name":"a.echo"}`},
		{"gateway.call_tool", `{"name":"a.echo","arguments":{}}`},
		{"gateway.call_tool_read", `{"name":"a.echo","arguments":{}}`},
	} {
		if code, msg := rpcError(g.post(t, bTok, sid, callMsg(10+i, c.tool, c.args))); code != -32602 || msg != "Tool not found: a.echo" {
			t.Errorf("bob's %s: %d %q", c.tool, code, msg)
		}
	}
	if r := g.post(t, bTok, sid, callMsg(20, "gateway.call_tool", `{"name":"b.echo","arguments":{}}`)); r.msg["result"] == nil {
		t.Errorf("bob's call_tool of b.echo: %v", r.msg)
	}
}

// TestTeamsTypeScriptOAuth: the TypeScript SDK's client with its OAuth
// provider completes the flow against the gateway — 401, the metadata,
// the provider's discovery, sign-in at the OP (the script fills in its
// login page), the token for the gateway's resource — then lists and
// calls what alice's policy allows.
func TestTeamsTypeScriptOAuth(t *testing.T) {
	root := npmPeers(t)
	op := startOP(t)
	g := startTeams(t, op, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*testutil.DefaultTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", testdataPath("oauth_client.mjs"), g.base+"/mcp", testop.ClientID, alice.Username, alice.Password)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var res struct {
		Unauthorized bool
		Tools        []string
		Echo         map[string]any
		Resource     string
		Scope        string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, stderr.String())
	}
	if !res.Unauthorized {
		t.Error("the client was never asked to sign in")
	}
	if res.Resource != g.resource || !strings.Contains(res.Scope, "mcp") {
		t.Errorf("the client asked for resource %q scope %q, want %s and mcp", res.Resource, res.Scope, g.resource)
	}
	wantTools(t, res.Tools, "a.echo")
	wantNoTools(t, res.Tools, "b.echo")
	if res.Echo["who"] != "ts" {
		t.Errorf("echo: %v", res.Echo)
	}
}

// TestTeamsRateLimits: alice's requests past her identity's bucket get
// 429 with Retry-After and the JSON-RPC error -32029 with retryAfter in its
// data, over MCP and REST, while bob's are served; bob's second call of
// b.slow within the tool's bucket gets -32029 naming the tool; /metrics
// counts both.
func TestTeamsRateLimits(t *testing.T) {
	op := startOP(t)
	// One token a minute: no refill within the test, however slow.
	g := startTeams(t, op, map[string]any{"rate_limits": map[string]any{
		"identity": map[string]any{"per_minute": 1, "burst": 3},
		"tools":    []map[string]any{{"tools": []string{"b.slow"}, "per_minute": 1, "burst": 1}},
	}})
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")

	aSid := g.session(t, aTok) // 1
	if r := g.post(t, aTok, aSid, callMsg(2, "a.echo", `{}`)); r.msg["result"] == nil {
		t.Fatalf("alice's first call: %v", r.msg)
	}
	if r := g.post(t, aTok, aSid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		t.Errorf("a notification is no request: %d", r.status)
	}
	if r := g.post(t, aTok, aSid, callMsg(3, "a.echo", `{}`)); r.msg["result"] == nil { // 3
		t.Fatalf("alice's third request: %v", r.msg)
	}
	r := g.post(t, aTok, aSid, callMsg(4, "a.echo", `{}`))
	e, _ := r.msg["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if retry, _ := data["retryAfter"].(float64); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" ||
		e["code"] != float64(-32029) || retry <= 0 || data["limit"] != "identity" || r.msg["id"] != float64(4) {
		t.Errorf("alice over her limit: %d Retry-After %q %v", r.status, r.header.Get("Retry-After"), r.msg)
	}
	if resp, raw := g.rest(t, aTok, `{"name":"a.echo"}`); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(raw, "RATE_LIMITED") {
		t.Errorf("alice's REST over her limit: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}

	bSid := g.session(t, bTok)
	if r := g.post(t, bTok, bSid, callMsg(2, "b.slow", `{"ms":1}`)); r.msg["result"] == nil {
		t.Fatalf("bob's first b.slow: %v", r.msg)
	}
	r = g.post(t, bTok, bSid, callMsg(3, "b.slow", `{"ms":1}`))
	e, _ = r.msg["error"].(map[string]any)
	data, _ = e["data"].(map[string]any)
	if r.status != http.StatusOK || e["code"] != float64(-32029) || data["limit"] != "tool" || data["tool"] != "b.slow" {
		t.Errorf("bob's second b.slow: %d %v", r.status, r.msg)
	}

	metrics, _ := io.ReadAll(getURL(t, g.base+"/metrics", map[string]string{"Authorization": "Bearer " + bTok}).Body)
	for _, want := range []string{`mcp_gateway_rate_limited_total{limit="identity",server=""} 2`, `mcp_gateway_rate_limited_total{limit="tool",server="b"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(metrics), "rate_limited"))
		}
	}
}

// TestTeamsStatusAndMetricsFollowPolicy: /status and /metrics show a
// caller the servers its policy lets it see, as its lists do: alice
// (team-a) sees a's state and series and nothing of b — not its state,
// error or stderr, not a series labelled server="b"; bob the other way.
func TestTeamsStatusAndMetricsFollowPolicy(t *testing.T) {
	op := startOP(t)
	g := startTeams(t, op, nil)
	for _, c := range []struct {
		user      testop.User
		sees, not string
	}{{alice, "a", "b"}, {bob, "b", "a"}} {
		tok := token(t, op, testop.ClientID, c.user, g.resource, "openid", "mcp")
		auth := map[string]string{"Authorization": "Bearer " + tok}
		var status struct {
			Servers []struct{ Name string }
		}
		if err := json.NewDecoder(getURL(t, g.base+"/status", auth).Body).Decode(&status); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range status.Servers {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, []string{c.sees}) {
			t.Errorf("%s's /status shows servers %v, want [%s]", c.user.Username, names, c.sees)
		}
		metrics, _ := io.ReadAll(getURL(t, g.base+"/metrics", auth).Body)
		if !strings.Contains(string(metrics), `mcp_gateway_backend_state{server="`+c.sees+`"`) {
			t.Errorf("%s's /metrics lacks server %s:\n%s", c.user.Username, c.sees, grepLines(string(metrics), "server="))
		}
		if strings.Contains(string(metrics), `server="`+c.not+`"`) {
			t.Errorf("%s's /metrics shows server %s, which the policy hides:\n%s", c.user.Username, c.not, grepLines(string(metrics), `server="`+c.not+`"`))
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestPolicyCheck: `mcp-gateway policy check` explains the policy for a
// caller and a tool named in any spelling, offline: exit 0 when allowed, 1
// when denied, 2 for a name no server has.
func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	cfg := httpConfig(t, map[string]any{"policy": map[string]any{"rules": []map[string]any{
		{"name": "team-a", "when": `"team-a" in groups`, "allow": []string{"tb"}, "deny": []string{"tb.crash"}},
		{"name": "admins", "when": `claims.role == "admin"`, "allow": []string{"*"}},
		{"name": "juniors", "when": `claims.level == "junior"`, "deny": []string{"tb.slow"}},
	}}}, tb("tb"))
	run := func(args ...string) (string, int) {
		cmd := exec.Command(gatewayBin, append([]string{"policy", "check", "--config", cfg}, args...)...)
		cmd.Env = baseEnv(t)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--subject", "alice", "--group", "team-a", "tb.echo"}, 0,
			[]string{`subject "alice" (auth oauth): tb.echo (server tb, tool echo) is allowed`, `allowed by rule "team-a" (allow tb)`, "team-a", "applies", "admins"}},
		{[]string{"--subject", "alice", "--group", "team-a", "tb__crash"}, 1, []string{`is denied`, `denied by rule "team-a" (deny tb.crash)`}},
		{[]string{"--subject", "bob", "tb.echo"}, 1, []string{"is denied", "no rule that applies allows it", "error: no such key: role (its allows grant nothing, its denies still deny)"}},
		// A deny whose condition errors for the caller (no level claim) fails closed, and says so.
		{[]string{"--subject", "alice", "--group", "team-a", "tb.slow"}, 1, []string{`is denied`,
			`denied by rule "juniors" (deny tb.slow), whose condition could not be evaluated for this caller: a deny whose condition errors denies (fails closed)`,
			"error: no such key: level"}},
		{[]string{"--subject", "alice", "--group", "team-a", "--claim", "level=senior", "tb.slow"}, 0, []string{`allowed by rule "team-a" (allow tb)`}},
		{[]string{"--subject", "carol", "--claim", "role=admin", "tb.crash"}, 0, []string{`allowed by rule "admins" (allow *)`}},
		{[]string{"--subject", "x", "nosuch.tool"}, exitUsage, []string{"no configured server's prefix matches"}},
	} {
		out, code := run(c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, code, c.code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

// TestTeamsDashboardAdmin: with auth: oauth every caller is authenticated,
// so the trust dashboard (/, /approve, and /add) is only for the callers
// gateway.policy.admin names; without it, for nobody.
func TestTeamsDashboardAdmin(t *testing.T) {
	op := startOP(t)
	rules := []map[string]any{
		{"name": "team-a", "when": `"team-a" in groups`, "allow": []string{"a"}},
		{"name": "team-b", "when": `"team-b" in groups || subject == "u-bob"`, "allow": []string{"b"}},
	}
	get := func(g *teamsGW, tok, method, path string) int {
		req, _ := http.NewRequest(method, g.base+path, strings.NewReader("server=a&kind=tool&name=echo&digest=x&csrf=x"))
		req.Header.Set("Authorization", "Bearer "+tok)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	g := startTeams(t, op, map[string]any{"policy": map[string]any{"rules": rules, "admin": `subject == "u-alice"`}})
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")
	if code := get(g, aTok, http.MethodGet, "/"); code != http.StatusOK {
		t.Errorf("the admin's dashboard: %d", code)
	}
	// The page, Approve, and adding a server (search, form, plan, confirm).
	for _, req := range [][2]string{{http.MethodGet, "/"}, {http.MethodPost, "/approve"}, {http.MethodGet, "/add?q=x"}, {http.MethodPost, "/add"}, {http.MethodPost, "/add/confirm"}} {
		if code := get(g, bTok, req[0], req[1]); code != http.StatusForbidden {
			t.Errorf("%s %s for a caller who is no admin: %d, want 403", req[0], req[1], code)
		}
	}
	none := startTeams(t, op, nil) // no gateway.policy.admin
	aTok = token(t, op, testop.ClientID, alice, none.resource, "openid", "mcp")
	if code := get(none, aTok, http.MethodGet, "/"); code != http.StatusForbidden {
		t.Errorf("the dashboard with no admin named: %d, want 403", code)
	}
}
