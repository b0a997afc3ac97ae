package main

import (
	"bufio"
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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// oauthServer is an MCP server behind OAuth 2.1 on loopback, with its own
// authorization server: protected resource metadata, authorization server
// metadata, dynamic registration, an authorization endpoint that redirects
// at once (a user who consents), and a token endpoint that checks PKCE and
// refreshes. Its access tokens live one second (ttl), so every use
// refreshes, until a test changes that.
type oauthServer struct {
	*httptest.Server

	mu        sync.Mutex
	codes     map[string]string // code → code_challenge
	access    map[string]bool   // valid access tokens
	refreshes int
	next      int
	ttl       int  // seconds an access token lives
	noRefresh bool // refresh tokens are refused
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{codes: map[string]string{}, access: map[string]bool{}, ttl: 1}
	srv := mcp.NewServer(&mcp.Implementation{Name: "secure", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}, nil, nil
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
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "gw-client", "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.mu.Lock()
		o.next++
		code := fmt.Sprintf("code-%d", o.next)
		o.codes[code] = q.Get("code_challenge")
		o.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"code": {code}, "state": {q.Get("state")}}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
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
		case "refresh_token":
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
		writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": o.ttl, "refresh_token": "refresh-1"})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		ok := o.access[tok]
		o.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
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

func (o *oauthServer) refreshCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refreshes
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

	// login: the test is the browser.
	cmd := exec.Command(gatewayBin, "login", "secure", "--config", cfg)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout testutil.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlLine := regexp.MustCompile(`^\s+(http://\S+/authorize\S*)`)
	sc := bufio.NewScanner(stderr)
	var authURL string
	var loginErr strings.Builder
	for sc.Scan() {
		loginErr.WriteString(sc.Text() + "\n")
		if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
			authURL = m[1]
			break
		}
	}
	if authURL == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("login printed no URL:\n%s", loginErr.String())
	}
	go io.Copy(io.Discard, stderr)
	resp, err := http.Get(authURL) // follows the redirect to login's loopback listener
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "Signed in to secure") {
		t.Errorf("callback page: %s", page)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(stdout.String(), "Signed in to secure") {
		t.Fatalf("login: %v\n%s\n%s", err, stdout.String(), loginErr.String())
	}
	tokens := filepath.Join(home, ".config", "mcp-gateway", "tokens", "secure.json")
	fi, err := os.Stat(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", tokens, fi.Mode().Perm())
	}

	// The running gateway picks it up, and refreshes the short-lived token.
	testutil.WaitFor(t, beReadTimeout, "the running gateway to use the new sign-in", func() bool {
		return s.callTool("secure.whoami", `{}`).Map()["result"] != nil
	})
	before := o.refreshCount()
	time.Sleep(1100 * time.Millisecond) // the access token expires
	if r := s.callTool("secure.whoami", `{}`); r.Map()["result"] == nil {
		t.Errorf("after the token expired: %s", r)
	}
	if o.refreshCount() == before {
		t.Error("the expired token was not refreshed")
	}
	// A token the server drops before its time is refreshed at the 401.
	o.set(func(o *oauthServer) { o.ttl = 3600 })
	s.callTool("secure.whoami", `{}`) // its token is expired: a long-lived one comes
	o.set(func(o *oauthServer) { o.access = map[string]bool{} })
	before = o.refreshCount()
	if r := s.callTool("secure.whoami", `{}`); r.Map()["result"] == nil || o.refreshCount() == before {
		t.Errorf("after the server dropped the token (%d refreshes before, %d after): %s", before, o.refreshCount(), r)
	}
	// A refused refresh: the server needs a login again.
	o.set(func(o *oauthServer) { o.access, o.noRefresh = map[string]bool{}, true })
	testutil.WaitFor(t, beReadTimeout, "needs_login after the refresh was refused", func() bool {
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
