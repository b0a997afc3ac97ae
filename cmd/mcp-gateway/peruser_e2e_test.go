package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
)

// userUpstream is a remote MCP server with its own users, behind OAuth 2.1
// on loopback: its tool whoami answers the user its access token was issued
// to. Its authorization server registers clients dynamically, checks PKCE
// (S256), refreshes, revokes (RFC 7009), and asks who signs in: the
// authorization endpoint without a user answers a page asking for one,
// and with ?user=NAME (the person's answer) redirects with a code. An
// expired or revoked token is refused (401).
type userUpstream struct {
	*httptest.Server

	mu        sync.Mutex
	ttl       int                  // seconds an access token lives
	codes     map[string][2]string // code → user, code_challenge
	access    map[string]upToken   // access token → its user and expiry
	refresh   map[string]string    // refresh token → user
	refreshes map[string]int       // by user
	revoked   []string
	expired   int // requests with an expired access token
	next      int
}

type upToken struct {
	user string
	exp  time.Time
}

func newUserUpstream(t *testing.T) *userUpstream {
	t.Helper()
	o := &userUpstream{ttl: 3600, codes: map[string][2]string{}, access: map[string]upToken{}, refresh: map[string]string{}, refreshes: map[string]int{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "people", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "upstream user " + req.Extra.TokenInfo.UserID}}}, nil, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		at, ok := o.access[tok]
		switch {
		case !ok:
			return nil, auth.ErrInvalidToken
		case time.Now().After(at.exp):
			o.expired++
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: at.user, Expiration: at.exp}, nil
	}
	mux := http.NewServeMux()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: "/.well-known/oauth-protected-resource/mcp"})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"resource": o.URL + "/mcp", "authorization_servers": []string{o.URL}, "scopes_supported": []string{"mcp"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"issuer": o.URL, "authorization_endpoint": o.URL + "/authorize", "token_endpoint": o.URL + "/token",
			"registration_endpoint": o.URL + "/register", "revocation_endpoint": o.URL + "/revoke",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusCreated)
		js(w, map[string]any{"client_id": "gw-people", "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		user := q.Get("user")
		if user == "" {
			// A form that sends the request again with the user's answer.
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<form method="get">`)
			for k, vs := range q {
				fmt.Fprintf(w, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(vs[0]))
			}
			fmt.Fprint(w, `<label>who are you? <input name="user"></label></form>`)
			return
		}
		if q.Get("code_challenge_method") != "S256" || q.Get("resource") != o.URL+"/mcp" {
			http.Error(w, "needs S256 PKCE and the resource", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		o.next++
		code := fmt.Sprintf("code-%d", o.next)
		o.codes[code] = [2]string{user, q.Get("code_challenge")}
		o.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		to.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		bad := func() {
			w.WriteHeader(http.StatusBadRequest)
			js(w, map[string]any{"error": "invalid_grant"})
		}
		var user string
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			c, ok := o.codes[r.Form.Get("code")]
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || c[1] != base64.RawURLEncoding.EncodeToString(sum[:]) {
				bad()
				return
			}
			delete(o.codes, r.Form.Get("code"))
			user = c[0]
		case "refresh_token":
			var ok bool
			if user, ok = o.refresh[r.Form.Get("refresh_token")]; !ok {
				bad()
				return
			}
			delete(o.refresh, r.Form.Get("refresh_token"))
			o.refreshes[user]++
		default:
			bad()
			return
		}
		o.next++
		at, rt := fmt.Sprintf("access-%s-%d", user, o.next), fmt.Sprintf("refresh-%s-%d", user, o.next)
		o.access[at] = upToken{user, time.Now().Add(time.Duration(o.ttl) * time.Second)}
		o.refresh[rt] = user
		js(w, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": o.ttl, "refresh_token": rt})
	})
	mux.HandleFunc("/revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		tok := r.Form.Get("token")
		o.revoked = append(o.revoked, tok)
		delete(o.refresh, tok)
		delete(o.access, tok)
	})
	o.Server = httptest.NewServer(mux)
	t.Cleanup(o.Close)
	return o
}

func (o *userUpstream) set(f func(*userUpstream)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(o)
}

// browser is a person's browser: its own cookies, redirects followed.
type browser struct {
	t  *testing.T
	hc *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func (b *browser) get(u string) (*http.Response, string) {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return b.do(req)
}

var hiddenState = regexp.MustCompile(`name="state" value="([^"]+)"`)

// confirm opens a sign-in link and confirms on its page; it returns the
// response that follows (the upstream's page asking who signs in) and the
// confirmation page.
func (b *browser) confirm(link string) (*http.Response, string) {
	b.t.Helper()
	resp, page := b.get(link)
	m := hiddenState.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		b.t.Fatalf("the sign-in link's page: %d %s", resp.StatusCode, page)
	}
	req, _ := http.NewRequest(http.MethodPost, resp.Request.URL.String(), strings.NewReader(url.Values{"state": {html.UnescapeString(m[1])}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", resp.Request.URL.Scheme+"://"+resp.Request.URL.Host)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	asked, body := b.do(req)
	if asked.StatusCode != http.StatusOK {
		b.t.Fatalf("confirming the sign-in: %d %s", asked.StatusCode, body)
	}
	return asked, page
}

// signIn is a person signing in to the upstream as user through a sign-in
// link: the gateway's confirmation, the upstream's question, the callback.
func (b *browser) signIn(link, user string) string {
	b.t.Helper()
	asked, _ := b.confirm(link)
	if asked.Request.URL.Path != "/authorize" {
		b.t.Fatalf("confirming sent the browser to %s, not the upstream's authorization endpoint", asked.Request.URL)
	}
	resp, page := b.get(asked.Request.URL.String() + "&user=" + url.QueryEscape(user))
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "Signed in to") {
		b.t.Fatalf("the callback: %d %s", resp.StatusCode, page)
	}
	return page
}

// signInError returns the sign-in link of a call's error (-32003, reason
// sign_in, the link in data.url and in the message), or fails.
func signInError(t *testing.T, r mcpReply) string {
	t.Helper()
	code, msg := rpcError(r)
	e, _ := r.msg["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	link, _ := data["url"].(string)
	if code != -32003 || data["reason"] != "sign_in" || data["server"] != "people" || !strings.Contains(link, "/upstream/login/people?state=") ||
		!strings.Contains(msg, "sign in") || !strings.Contains(msg, link) {
		t.Fatalf("not the sign-in error: %v", r.msg)
	}
	return link
}

// upstreamUser is the user whoami's answer names ("" for an error).
func upstreamUser(r mcpReply) string {
	res, _ := r.msg["result"].(map[string]any)
	if res == nil || res["isError"] == true {
		return ""
	}
	c, _ := res["content"].([]any)
	if len(c) == 0 {
		return ""
	}
	txt, _ := c[0].(map[string]any)["text"].(string)
	return strings.TrimPrefix(txt, "upstream user ")
}

// startPerUser starts the gateway as a resource server of op in front of
// up, a per_user_login server named people, with the state key set; alice
// (team-a) may view the dashboard.
func startPerUser(t *testing.T, op *testop.OP, up *userUpstream, home string) (g *teamsGW, cfg string) {
	t.Helper()
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"
	gw := map[string]any{
		"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false,
		"http": map[string]any{
			"auth":          "oauth",
			"state_key_env": "GW_STATE_KEY",
			// Another origin only: the sign-in page's own form, posted
			// from the gateway's origin, must pass all the same.
			"allowed_origins": []string{"https://app.example.com"},
			"oauth": map[string]any{
				"resource": resource,
				"issuers":  []map[string]any{{"issuer": op.Issuer}},
				"scopes":   []string{"mcp"},
			},
		},
		"policy": map[string]any{
			"rules": []map[string]any{{"name": "all", "when": "true", "allow": []string{"*"}}},
			"admin": `"team-a" in groups`,
		},
	}
	servers := []map[string]any{{"name": "people", "url": up.URL + "/mcp", "upstream_auth": map[string]any{"mode": "per_user_login"}}}
	b, err := json.Marshal(map[string]any{"gateway": gw, "servers": servers})
	if err != nil {
		t.Fatal(err)
	}
	cfg = testutil.TempFile(t, "config.yaml", string(b))
	hg := startHTTPAt(t, addr, cfg, baseEnv(t, "HOME="+home, "USERPROFILE="+home, "GW_STATE_KEY=per-user-test-key"))
	return &teamsGW{httpGW: hg, resource: resource}, cfg
}

// TestPerUserLogin (issue 36's per_user_login acceptance, with a real
// OpenID provider as the gateway's and an upstream with its own users):
// alice's first call gets the sign-in error with her link, which the
// dashboard offers too; the link's page names her; she signs in there once as the upstream's
// ALICE and her calls then reach the upstream as ALICE; bob, who has not signed in, gets the
// sign-in error with a link of his own, never alice's connection; the
// authorization response replayed in another browser is refused; a token
// about to expire is refreshed before it is sent; logout --subject signs
// alice out (her tokens revoked upstream: her next call gets the sign-in
// error); the dashboard shows her sign-in and its button signs her out.
func TestPerUserLogin(t *testing.T) {
	t.Parallel()
	op := startOP(t)
	up := newUserUpstream(t)
	home := t.TempDir()
	g, cfg := startPerUser(t, op, up, home)
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	bTok := token(t, op, testop.ClientID, bob, g.resource, "openid", "mcp")
	aSID, bSID := g.session(t, aTok), g.session(t, bTok)
	call := func(tok, sid string) mcpReply {
		return g.post(t, tok, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"people.whoami","arguments":{}}}`)
	}

	// Nobody has signed in yet: alice's call gets the sign-in error, and
	// the dashboard offers her the same sign-in.
	aFirst := signInError(t, call(aTok, aSID))
	page := dashboardAs(t, g, aTok)
	m := regexp.MustCompile(`<a href="([^"]+)">Sign in to people</a>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the dashboard offers alice no sign-in to people:\n%s", page)
	}
	aLink := html.UnescapeString(m[1])
	for _, l := range []string{aFirst, aLink} {
		if !strings.HasPrefix(l, g.base+"/upstream/login/people?state=") {
			t.Errorf("alice's link is not on the gateway's origin: %s", l)
		}
	}
	// The link's page says whose sign-in it is, before anything is sent
	// upstream: a person given alice's link learns that it is hers.
	if _, page := newBrowser(t).get(aLink); !strings.Contains(page, "u-alice@") || !strings.Contains(page, "If you are not") {
		t.Errorf("the sign-in page does not name the caller:\n%s", page)
	}
	// Another site cannot confirm for a person's browser (its POST says
	// where it comes from), and a link the gateway did not seal, or for
	// another server, opens nothing.
	state := strings.TrimPrefix(aLink, g.base+"/upstream/login/people?state=")
	forged := "A" + state[1:]
	if state[0] == 'A' {
		forged = "B" + state[1:]
	}
	for _, c := range []struct {
		name, path, state, site string
		want                    int
	}{
		{"from another site", "/upstream/login/people", state, "cross-site", http.StatusForbidden},
		{"a forged link", "/upstream/login/people", forged, "same-origin", http.StatusBadRequest},
		{"another server's", "/upstream/login/other", state, "same-origin", http.StatusBadRequest},
	} {
		req, _ := http.NewRequest(http.MethodPost, g.base+c.path, strings.NewReader(url.Values{"state": {c.state}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", c.site)
		if resp, page := newBrowser(t).do(req); resp.StatusCode != c.want || resp.Request.URL.Path != c.path {
			t.Errorf("%s: %d at %s\n%s", c.name, resp.StatusCode, resp.Request.URL, page)
		}
	}
	// An authorization response is completed only in the browser that
	// confirmed: replayed elsewhere (login CSRF), it is refused.
	asked, _ := newBrowser(t).confirm(aLink)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(asked.Request.URL.String() + "&user=MALLORY")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, page := newBrowser(t).get(resp.Header.Get("Location")); resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "another browser") {
		t.Errorf("the callback in another browser: %d %s", resp.StatusCode, page)
	}

	aBrowser := newBrowser(t)
	aBrowser.signIn(aLink, "ALICE")
	if r := call(aTok, aSID); upstreamUser(r) != "ALICE" {
		t.Fatalf("alice's call after signing in: %v", r.msg)
	}
	bLink := signInError(t, call(bTok, bSID))
	if bLink == aLink {
		t.Error("bob was given alice's link")
	}
	if _, page := newBrowser(t).get(bLink); !strings.Contains(page, "u-bob@") {
		t.Errorf("bob's link is not his:\n%s", page)
	}
	if got := upstreamUser(call(aTok, aSID)); got != "ALICE" {
		t.Errorf("alice's call after bob's: %q", got)
	}

	// A token that expires within the refresh margin (30 s) is refreshed
	// before it is sent: alice signs in again, and her tokens now live
	// 20 s; the upstream never sees one expired.
	// Her link served its sign-in: it opens nothing now (whoever finds
	// it cannot replace her account with theirs). To sign in again she
	// signs out, and gets a new one.
	if resp, page := newBrowser(t).get(aLink); resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "was used") {
		t.Errorf("alice's link after she signed in with it: %d\n%s", resp.StatusCode, page)
	}
	dashboardSignOut(t, g, aTok, "people")
	up.set(func(o *userUpstream) { o.ttl = 20 })
	aBrowser.signIn(signInError(t, call(aTok, aSID)), "ALICE")
	if got := upstreamUser(call(aTok, aSID)); got != "ALICE" {
		t.Errorf("alice's call after a short-lived sign-in: %q", got)
	}
	up.set(func(o *userUpstream) {
		if o.refreshes["ALICE"] == 0 || o.expired != 0 {
			t.Errorf("%d refreshes, %d expired tokens sent", o.refreshes["ALICE"], o.expired)
		}
		o.ttl = 3600
	})

	// An administrator signs alice out: her tokens are revoked upstream and
	// her next call gets the sign-in error.
	var revoked int // by the sign-out above
	up.set(func(o *userUpstream) { revoked = len(o.revoked) })
	out, errOut, code := runCLIEnv(t, baseEnv(t, "HOME="+home, "USERPROFILE="+home), "logout", "people", "--subject", "u-alice", "--config", cfg)
	if code != 0 || !strings.Contains(out, "Signed u-alice@") {
		t.Fatalf("logout --subject: %d\n%s\n%s", code, out, errOut)
	}
	up.set(func(o *userUpstream) {
		if len(o.revoked)-revoked != 2 {
			t.Errorf("revoked upstream: %q", o.revoked[revoked:])
		}
	})
	signInError(t, call(aTok, aSID))

	// The dashboard: alice signs in from her link there, and signs out
	// with its button.
	aBrowser.signIn(signInError(t, call(aTok, aSID)), "ALICE")
	page = dashboardAs(t, g, aTok)
	if !strings.Contains(page, "Sign out of people") {
		t.Fatalf("the dashboard does not show alice signed in to people:\n%s", page)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	req, _ := http.NewRequest(http.MethodPost, g.base+"/upstream/logout", strings.NewReader(url.Values{"csrf": {csrf[1]}, "server": {"people"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+aTok)
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("sign out on the dashboard: %d", resp.StatusCode)
	}
	signInError(t, call(aTok, aSID))
	if page := dashboardAs(t, g, aTok); !strings.Contains(page, "Sign in to people") {
		t.Errorf("the dashboard after signing out:\n%s", page)
	}
	for _, secret := range []string{"access-ALICE", "refresh-ALICE"} {
		if strings.Contains(g.stderr.String(), secret) {
			t.Errorf("the log holds %q:\n%s", secret, g.stderr)
		}
	}
}

// dashboardAs is the dashboard page as the bearer of tok sees it.
func dashboardAs(t *testing.T, g *teamsGW, tok string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.base+"/", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("dashboard: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestPerUserLoginChromium: the sign-in in a real browser (headless
// Chromium), from the link of alice's call's error to the callback, with
// the Origin, cookie and referrer rules Chromium applies; her next call
// reaches the upstream as ALICE.
func TestPerUserLoginChromium(t *testing.T) {
	t.Parallel()
	chromium := findChromium(t)
	node := needNode(t)
	root := npmPeers(t, "playwright-core/package.json")
	op := startOP(t)
	up := newUserUpstream(t)
	g, _ := startPerUser(t, op, up, t.TempDir())
	aTok := token(t, op, testop.ClientID, alice, g.resource, "openid", "mcp")
	aSID := g.session(t, aTok)
	call := func() mcpReply {
		return g.post(t, aTok, aSID, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"people.whoami","arguments":{}}}`)
	}
	link := signInError(t, call())
	if err := runPageScript(t, 2*time.Minute, node, root, "upstream_signin.mjs", link, "u-alice@", "ALICE", chromium, artifactDir(t, root)); err != nil {
		t.Fatalf("the sign-in in Chromium: %v", err)
	}
	if got := upstreamUser(call()); got != "ALICE" {
		t.Errorf("alice's call after signing in in Chromium reached the upstream as %q", got)
	}
}

// logout --subject names a person's sign-in, which only a per_user_login
// server keeps: for another remote server it is a usage error, and the
// shared sign-in is left alone.
func TestLogoutSubjectNotPerUser(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := baseEnv(t, "HOME="+home, "USERPROFILE="+home)
	cfg := beConfig(t, beServer{Name: "shared", URL: "http://127.0.0.1:9/mcp"})
	out, errOut, code := runCLIEnv(t, env, "logout", "shared", "--subject", "u-alice", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "shared is not a per_user_login server") {
		t.Errorf("logout --subject of a shared sign-in: %d\n%s\n%s", code, out, errOut)
	}
}
