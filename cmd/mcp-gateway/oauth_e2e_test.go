package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// oauthServer is an MCP server behind OAuth 2.1 on loopback, with its own
// authorization server: protected resource metadata, authorization server
// metadata, dynamic registration, an authorization endpoint that redirects
// at once (a user who consents), and a token endpoint that checks PKCE and
// refreshes. Its access tokens live one second (ttl), so every use
// refreshes, until a test changes that; the resource server accepts an
// expired token, so a refresh on expiry and one at a 401 (refused counts
// those) can be told apart. Its tool admin needs the scope
// admin (step-up); with redirect set, its only client is pre-registered
// with that exact redirect URI.
type oauthServer struct {
	*httptest.Server

	mu        sync.Mutex
	codes     map[string]string // code → code_challenge
	access    map[string]bool   // valid access tokens
	scopes    map[string]string // code or access token → its scope
	asked     []string          // the scope of each authorization request
	granted   string            // the scope of the last code exchanged
	refreshes int
	refused   int // requests to /mcp answered 401
	next      int
	ttl       int  // seconds an access token lives
	noRefresh bool // refresh tokens are refused
	// hang, when set, holds every refresh until it is closed or the
	// request ends.
	hang     chan struct{}
	down     bool   // refreshes are answered 503
	redirect string // the pre-registered client's redirect URI; "": dynamic registration
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{codes: map[string]string{}, access: map[string]bool{}, scopes: map[string]string{}, ttl: 1}
	srv := mcp.NewServer(&mcp.Implementation{Name: "secure", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "admin"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "admin done"}}}, nil, nil
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": o.URL + "/mcp", "authorization_servers": []string{o.URL}, "scopes_supported": []string{"mcp"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": o.URL, "authorization_endpoint": o.URL + "/authorize", "token_endpoint": o.URL + "/token",
			"registration_endpoint": o.URL + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		pre := o.redirect != ""
		o.mu.Unlock()
		if pre {
			t.Error("a client registered dynamically, not as the pre-registered one")
			http.Error(w, "registration closed", http.StatusForbidden)
			return
		}
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "gw-client", "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.mu.Lock()
		if o.redirect != "" && (q.Get("redirect_uri") != o.redirect || q.Get("client_id") != "pre-registered") {
			o.mu.Unlock()
			http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
			return
		}
		o.next++
		code := fmt.Sprintf("code-%d", o.next)
		o.codes[code] = q.Get("code_challenge")
		o.scopes[code] = q.Get("scope")
		o.asked = append(o.asked, q.Get("scope"))
		o.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"code": {code}, "state": {q.Get("state")}}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		hang := o.hang
		o.mu.Unlock()
		if hang != nil && r.Form.Get("grant_type") == "refresh_token" {
			select {
			case <-hang:
			case <-r.Context().Done():
				return
			}
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			if _, ok := o.codes[r.Form.Get("code")]; !ok || r.Form.Get("code_verifier") == "" {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(o.codes, r.Form.Get("code"))
			o.granted = o.scopes[r.Form.Get("code")]
		case "refresh_token":
			if o.down {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
			if r.Form.Get("refresh_token") != "refresh-1" || o.noRefresh {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"error": "invalid_grant"})
				return
			}
			o.refreshes++
		default:
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		o.next++
		tok := fmt.Sprintf("access-%d", o.next)
		o.access[tok] = true
		o.scopes[tok] = o.granted
		writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": o.ttl, "refresh_token": "refresh-1"})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		ok, scope := o.access[tok], o.scopes[tok]
		o.mu.Unlock()
		meta := `resource_metadata="` + o.URL + `/.well-known/oauth-protected-resource/mcp"`
		if !ok {
			o.mu.Lock()
			o.refused++
			o.mu.Unlock()
			w.Header().Set("WWW-Authenticate", "Bearer "+meta)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var call struct{ Params struct{ Name string } }
		if json.Unmarshal(body, &call) == nil && call.Params.Name == "admin" && !slices.Contains(strings.Fields(scope), "admin") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp admin", `+meta)
			http.Error(w, "needs scope admin", http.StatusForbidden)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	o.Server = httptest.NewServer(mux)
	t.Cleanup(o.Close)
	return o
}

// set changes the server's behaviour under its lock.
func (o *oauthServer) set(f func(*oauthServer)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f(o)
}

// authorizations returns the scope of each authorization request so far.
func (o *oauthServer) authorizations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.asked)
}

func (o *oauthServer) refreshCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refreshes
}

func (o *oauthServer) refusedCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refused
}

// login runs `mcp-gateway login NAME` with the test as the browser: it
// follows the printed authorization URL to login's loopback listener, and
// returns the authorization URL once login has succeeded.
func login(t *testing.T, env []string, cfg, name string) *url.URL {
	t.Helper()
	return loginWith(t, env, cfg, name, nil)
}

// loginWith is login with forge, if not nil, run with the authorization
// URL before the browser follows it.
func loginWith(t *testing.T, env []string, cfg, name string, forge func(authURL *url.URL)) *url.URL {
	t.Helper()
	cmd := exec.Command(gatewayBin, "login", name, "--config", cfg)
	cmd.Env = env
	var stdout, loginErr testutil.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &loginErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	urlLine := regexp.MustCompile(`(?m)^\s+(http://\S+/authorize\S*)`)
	var authURL string
	testutil.WaitFor(t, testutil.DefaultTimeout, "login to print the authorization URL", func() bool {
		if m := urlLine.FindStringSubmatch(loginErr.String()); m != nil {
			authURL = m[1]
			return true
		}
		select {
		case err := <-exited:
			t.Fatalf("login exited before printing a URL: %v\n%s", err, loginErr.String())
		default:
		}
		return false
	})
	if forge != nil {
		u, err := url.Parse(authURL)
		if err != nil {
			t.Fatal(err)
		}
		forge(u)
	}
	resp, err := http.Get(authURL) // follows the redirect to login's loopback listener
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "Signed in to "+name) {
		t.Errorf("callback page: %s", page)
	}
	var err2 error
	select {
	case err2 = <-exited:
	case <-time.After(testutil.DefaultTimeout):
		cmd.Process.Kill()
		err2 = <-exited
	}
	if err2 != nil || !strings.Contains(stdout.String(), "Signed in to "+name) {
		t.Fatalf("login: %v\n%s\n%s", err2, stdout.String(), loginErr.String())
	}
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A server that needs sign-in is needs_login and its calls say to run
// `mcp-gateway login NAME`; login signs in through the browser redirect to
// a loopback port and stores the tokens (0600), which the running gateway
// picks up without a restart and refreshes; logout forgets them.
func TestRemoteOAuthLogin(t *testing.T) {
	t.Parallel()
	o := newOAuthServer(t)
	home := t.TempDir()
	env := baseEnv(t, "HOME="+home, "USERPROFILE="+home, "BROWSER=true")
	cfg := beConfig(t, beServer{Name: "secure", URL: o.URL + "/mcp"})
	s := startRaw(t, cfg, "e2e", "HOME="+home, "USERPROFILE="+home)

	code, msg, data := s.callTool("secure.whoami", `{}`).Error(t)
	if code != -32000 || !strings.Contains(msg, "mcp-gateway login secure") || data["state"] != "needs_login" {
		t.Errorf("before login: %d %q %v", code, msg, data)
	}
	st := remoteStatus(t, env, cfg)
	if len(st) != 1 || st[0].State != "needs_login" || !strings.Contains(st[0].Error, "mcp-gateway login secure") {
		t.Errorf("status before login: %+v", st)
	}

	login(t, env, cfg, "secure")
	tokens := filepath.Join(home, ".config", "mcp-gateway", "tokens", "secure.json")
	fi, err := os.Stat(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", tokens, fi.Mode().Perm())
	}

	// The running gateway picks it up, and refreshes the short-lived token.
	testutil.WaitFor(t, testutil.DefaultTimeout, "the running gateway to use the new sign-in", func() bool {
		return s.callTool("secure.whoami", `{}`).Map()["result"] != nil
	})
	before, refused := o.refreshCount(), o.refusedCount()
	time.Sleep(1100 * time.Millisecond) // the access token expires
	if r := s.callTool("secure.whoami", `{}`); r.Map()["result"] == nil {
		t.Errorf("after the token expired: %s", r)
	}
	if o.refreshCount() == before || o.refusedCount() != refused {
		t.Errorf("the expired token was not refreshed before it was sent (%d refreshes, %d 401s)", o.refreshCount()-before, o.refusedCount()-refused)
	}
	// A token the server drops before its time is refreshed at the 401.
	o.set(func(o *oauthServer) { o.ttl = 3600 })
	s.callTool("secure.whoami", `{}`) // its token is expired: a long-lived one comes
	o.set(func(o *oauthServer) { o.access = map[string]bool{} })
	before, refused = o.refreshCount(), o.refusedCount()
	if r := s.callTool("secure.whoami", `{}`); r.Map()["result"] == nil || o.refreshCount() == before || o.refusedCount() == refused {
		t.Errorf("after the server dropped the token (%d refreshes, %d 401s): %s", o.refreshCount()-before, o.refusedCount()-refused, r)
	}
	// A refused refresh: the server needs a login again.
	o.set(func(o *oauthServer) { o.access, o.noRefresh = map[string]bool{}, true })
	testutil.WaitFor(t, testutil.DefaultTimeout, "needs_login after the refresh was refused", func() bool {
		_, _, data := s.callTool("secure.whoami", `{}`).Error(t)
		return data["state"] == "needs_login"
	})

	if strings.Contains(s.Stderr.String(), "access-") || strings.Contains(s.Stderr.String(), "refresh-1") {
		t.Errorf("a token was logged:\n%s", s.Stderr)
	}

	out, errOut, code := runCLIEnv(t, env, "logout", "secure", "--config", cfg)
	if code != 0 || !strings.Contains(out, "Signed out of secure") {
		t.Errorf("logout: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(tokens); !os.IsNotExist(err) {
		t.Errorf("tokens still there after logout: %v", err)
	}
}

// status shows a remote server's URL without its password or query
// secrets (and never its headers), and a server waiting for sign-in with
// the command to run, in the table and in --json.
// A token endpoint that hangs, or answers 503, costs the calls that wait
// for a refresh, not the sign-in: the refresh gives up with the call's
// timeout, the server does not become needs_login, and the next call after
// the endpoint recovers succeeds.
func TestRemoteOAuthRefreshHangs(t *testing.T) {
	t.Parallel()
	o := newOAuthServer(t)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) }) // before the server closes
	home := t.TempDir()
	env := baseEnv(t, "HOME="+home, "USERPROFILE="+home, "BROWSER=true")
	cfg := beConfig(t, beServer{Name: "secure", URL: o.URL + "/mcp", TimeoutMS: 2000})
	s := startRaw(t, cfg, "e2e", "HOME="+home, "USERPROFILE="+home)
	login(t, env, cfg, "secure")
	testutil.WaitFor(t, testutil.DefaultTimeout, "the running gateway to use the new sign-in", func() bool {
		return s.callTool("secure.whoami", `{}`).Map()["result"] != nil
	})
	o.set(func(o *oauthServer) { o.hang = hang })
	time.Sleep(1100 * time.Millisecond) // the access token expires: the next call refreshes
	if r := s.callTool("secure.whoami", `{}`); r.Map()["error"] == nil {
		t.Fatalf("a call through a hanging refresh: %s", r)
	}
	o.set(func(o *oauthServer) { o.hang = nil })
	testutil.WaitFor(t, testutil.DefaultTimeout, "a call after the token endpoint recovered", func() bool {
		return s.callTool("secure.whoami", `{}`).Map()["result"] != nil
	})

	o.set(func(o *oauthServer) { o.down = true })
	time.Sleep(1100 * time.Millisecond)
	_, msg, data := s.callTool("secure.whoami", `{}`).Error(t)
	if !strings.Contains(msg, "refreshing the OAuth token failed") || data["state"] == "needs_login" {
		t.Errorf("a call while the token endpoint answers 503: %q %v", msg, data)
	}
	o.set(func(o *oauthServer) { o.down = false })
	if r := s.callTool("secure.whoami", `{}`); r.Map()["result"] == nil {
		t.Errorf("a call after the token endpoint came back: %s", r)
	}
}

func TestRemoteStatusURL(t *testing.T) {
	t.Parallel()
	o := newOAuthServer(t)
	home := t.TempDir()
	env := baseEnv(t, "HOME="+home, "USERPROFILE="+home)
	u, _ := url.Parse(o.URL)
	cfg := beConfig(t, beServer{
		Name:    "secure",
		URL:     "http://user:pw-secret@" + u.Host + "/mcp?token=qs-secret&x=1",
		Headers: map[string]string{"X-Key": "hdr-secret"},
	})
	want := "http://user:***@" + u.Host + "/mcp?token=***&x=1"

	out, errOut, code := runCLIEnv(t, env, "status", "--config", cfg)
	if code != 0 || !strings.Contains(out, "remote servers:\n  secure  "+want+"\n    needs sign-in: run `mcp-gateway login secure`\n") {
		t.Errorf("status: %d\n%s\n%s", code, out, errOut)
	}
	js, _, _ := runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var st struct {
		Servers []struct{ Name, State, URL, Error string }
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, js)
	}
	if len(st.Servers) != 1 || st.Servers[0].URL != want || st.Servers[0].State != "needs_login" ||
		st.Servers[0].Error != "needs sign-in: run `mcp-gateway login secure`" {
		t.Errorf("status --json: %+v", st.Servers)
	}
	for _, secret := range []string{"pw-secret", "qs-secret", "hdr-secret", "X-Key"} {
		if strings.Contains(out+errOut+js, secret) {
			t.Errorf("status shows %q:\n%s\n%s\n%s", secret, out, errOut, js)
		}
	}
}

// A 403 insufficient_scope during a call puts the server in needs_login,
// naming the scope and the command; the scopes are stored with the sign-in,
// the next login asks for them all, and the running gateway then calls the
// tool with the new token.
func TestRemoteOAuthStepUp(t *testing.T) {
	t.Parallel()
	o := newOAuthServer(t)
	o.set(func(o *oauthServer) { o.ttl = 3600 })
	home := t.TempDir()
	env := baseEnv(t, "HOME="+home, "USERPROFILE="+home, "BROWSER=true")
	cfg := beConfig(t, beServer{Name: "secure", URL: o.URL + "/mcp"})
	login(t, env, cfg, "secure")
	s := startRaw(t, cfg, "e2e", "HOME="+home, "USERPROFILE="+home)
	if r := s.callTool("secure.whoami", `{}`); r.Map()["result"] == nil {
		t.Fatalf("whoami after login: %s", r)
	}

	code, msg, data := s.callTool("secure.admin", `{}`).Error(t)
	wantMsg := "MCP server 'secure' needs sign-in with scope admin: run `mcp-gateway login secure`"
	if code != -32000 || msg != wantMsg || data["state"] != "needs_login" {
		t.Errorf("admin without the scope: %d %q %v", code, msg, data)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "needs_login in the running gateway", func() bool {
		_, msg, data := s.callTool("secure.whoami", `{}`).Error(t)
		return data["state"] == "needs_login" && msg == wantMsg
	})
	b, err := os.ReadFile(filepath.Join(home, ".config", "mcp-gateway", "tokens", "secure.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct{ Scopes []string }
	if err := json.Unmarshal(b, &stored); err != nil || !slices.Equal(stored.Scopes, []string{"mcp", "admin"}) {
		t.Errorf("stored scopes = %q (%v)", stored.Scopes, err)
	}

	login(t, env, cfg, "secure")
	// A scope parameter is a set (RFC 6749 section 3.3): the second login
	// may name the two in either order, depending on which challenge the
	// server gave last.
	if asked := o.authorizations(); len(asked) != 2 || asked[0] != "mcp" || !sameScopes(asked[1], "mcp admin") {
		t.Errorf("scopes asked at each login: %q", asked)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the running gateway to use the new sign-in", func() bool {
		return s.callTool("secure.admin", `{}`).Map()["result"] != nil
	})
}

// With oauth.redirect_uri, login listens on exactly that loopback address
// and path, and signs in as the pre-registered client, which the
// authorization server accepts only with that redirect URI.
func TestRemoteOAuthLoginRedirectURI(t *testing.T) {
	t.Parallel()
	o := newOAuthServer(t)
	redirect := fmt.Sprintf("http://%s/oauth/cb", freeAddr(t)) // login listens there
	o.set(func(o *oauthServer) { o.redirect = redirect })
	home := t.TempDir()
	env := baseEnv(t, "HOME="+home, "USERPROFILE="+home, "BROWSER=true")
	cfg := beConfig(t, beServer{Name: "secure", URL: o.URL + "/mcp", OAuth: map[string]any{"client_id": "pre-registered", "redirect_uri": redirect}})

	authURL := login(t, env, cfg, "secure")
	if got := authURL.Query().Get("redirect_uri"); got != redirect {
		t.Errorf("redirect_uri = %q, want %q", got, redirect)
	}
	b, err := os.ReadFile(filepath.Join(home, ".config", "mcp-gateway", "tokens", "secure.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal(b, &stored); err != nil || stored.ClientID != "pre-registered" {
		t.Errorf("stored client = %q (%v)", stored.ClientID, err)
	}
}

// TestRemoteOAuthLoginIgnoresForgedCallback: a request to login's
// loopback redirect whose state is wrong or missing (another page, another
// local program) is answered with an error page and ignored; the login
// goes on waiting, and the real callback signs in.
func TestRemoteOAuthLoginIgnoresForgedCallback(t *testing.T) {
	t.Parallel()
	o := newOAuthServer(t)
	home := t.TempDir()
	env := baseEnv(t, "HOME="+home, "USERPROFILE="+home, "BROWSER=true")
	cfg := beConfig(t, beServer{Name: "secure", URL: o.URL + "/mcp"})
	loginWith(t, env, cfg, "secure", func(authURL *url.URL) {
		redirect := authURL.Query().Get("redirect_uri")
		if redirect == "" || authURL.Query().Get("state") == "" {
			t.Fatalf("authorization URL without redirect_uri or state: %s", authURL)
		}
		for _, q := range []string{"code=forged&state=wrong", "code=forged", "error=access_denied&state=wrong", "code=forged&state="} {
			resp, err := http.Get(redirect + "?" + q)
			if err != nil {
				t.Fatalf("%s: %v (login stopped listening)", q, err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "does not belong to this sign-in") || strings.Contains(string(page), "Signed in") {
				t.Errorf("%s: %d %s", q, resp.StatusCode, page)
			}
		}
	})
	if _, err := os.Stat(filepath.Join(home, ".config", "mcp-gateway", "tokens", "secure.json")); err != nil {
		t.Errorf("no sign-in stored after the real callback: %v", err)
	}
}

// sameScopes reports whether two space-separated scope lists name the same
// set.
func sameScopes(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
