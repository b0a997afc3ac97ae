package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// upstreamAS is a remote MCP server's OAuth side for per_user_login: its
// protected resource metadata, an authorization server with registration,
// PKCE, refresh and revocation, whose codes name the user the test says
// signed in.
type upstreamAS struct {
	*httptest.Server
	mu        sync.Mutex
	ttl       int               // seconds an access token lives
	codes     map[string]string // code → user
	challenge map[string]string // code → code_challenge
	refresh   map[string]string // refresh token → user
	refreshes int
	revoked   []string
	next      int
	gate      chan struct{} // when set, refreshes wait for it
	noRefresh bool          // tokens come without a refresh token
	// onRefresh, when set, runs before a refresh is answered (outside the
	// lock), with the refresh token it is for.
	onRefresh func(rt string)
}

func newUpstreamAS(t *testing.T) *upstreamAS {
	a := &upstreamAS{ttl: 3600, codes: map[string]string{}, challenge: map[string]string{}, refresh: map[string]string{}}
	mux := http.NewServeMux()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+a.URL+`/.well-known/oauth-protected-resource/mcp", scope="mcp"`)
		http.Error(w, "sign in", http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"resource": a.URL + "/mcp", "authorization_servers": []string{a.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"issuer": a.URL, "authorization_endpoint": a.URL + "/authorize", "token_endpoint": a.URL + "/token",
			"registration_endpoint": a.URL + "/register", "revocation_endpoint": a.URL + "/revoke",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		js(w, map[string]any{"client_id": "gw", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.mu.Lock()
		a.next++
		code := fmt.Sprintf("code-%d", a.next)
		a.codes[code], a.challenge[code] = q.Get("user"), q.Get("code_challenge")
		a.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		to.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		a.mu.Lock()
		gate := a.gate
		a.mu.Unlock()
		if gate != nil && r.Form.Get("grant_type") == "refresh_token" {
			<-gate
		}
		a.mu.Lock()
		hook := a.onRefresh
		a.mu.Unlock()
		if hook != nil && r.Form.Get("grant_type") == "refresh_token" {
			hook(r.Form.Get("refresh_token"))
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		var user string
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			code := r.Form.Get("code")
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if a.challenge[code] != base64.RawURLEncoding.EncodeToString(sum[:]) {
				w.WriteHeader(http.StatusBadRequest)
				js(w, map[string]any{"error": "invalid_grant"})
				return
			}
			user = a.codes[code]
			delete(a.codes, code)
		case "refresh_token":
			var ok bool
			if user, ok = a.refresh[r.Form.Get("refresh_token")]; !ok {
				w.WriteHeader(http.StatusBadRequest)
				js(w, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(a.refresh, r.Form.Get("refresh_token")) // rotated
			a.refreshes++
		}
		a.next++
		res := map[string]any{"access_token": fmt.Sprintf("access-%s-%d", user, a.next), "token_type": "Bearer", "expires_in": a.ttl}
		if !a.noRefresh {
			rt := fmt.Sprintf("refresh-%s-%d", user, a.next)
			a.refresh[rt] = user
			res["refresh_token"] = rt
		}
		js(w, res)
	})
	mux.HandleFunc("/revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.revoked = append(a.revoked, r.Form.Get("token"))
		delete(a.refresh, r.Form.Get("token"))
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

func (a *upstreamAS) set(f func(*upstreamAS)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(a)
}

// signIn runs caller's sign-in as user at a, in a browser holding nonce,
// and returns the authorization response's query.
func signInAs(t *testing.T, u *Users, s config.Server, caller, user, nonce string) url.Values {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	to, err := u.Begin(ctx, s, caller, nonce)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(to + "&user=" + user)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), "https://gw.example/upstream/callback?") {
		t.Fatalf("redirected to %q (%v)", resp.Header.Get("Location"), err)
	}
	return loc.Query()
}

// A caller signs in once and then has its own token, refreshed before it
// expires by one refresh however many calls wait for it; another caller
// has none; a response completed in another browser is refused; a
// refused refresh, and a logout (which revokes), sign the caller out.
func TestUsersSignInRefreshLogout(t *testing.T) {
	t.Parallel()
	a := newUpstreamAS(t)
	dir := t.TempDir()
	u := NewUsers(UsersOptions{TokenDir: dir, Callback: "https://gw.example/upstream/callback"})
	s := config.Server{Name: "up", URL: a.URL + "/mcp"}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	find := func(name string) (config.Server, bool) { return s, name == s.Name }

	if _, _, err := u.Token(ctx, s, "alice@op"); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("before sign-in: %v", err)
	}
	q := signInAs(t, u, s, "alice@op", "ALICE", "nonce-1")
	if _, _, err := u.Complete(ctx, find, q.Get("state"), q.Get("code"), "", "nonce-other"); err == nil || !strings.Contains(err.Error(), "another browser") {
		t.Fatalf("completed in another browser: %v", err)
	}
	server, caller, err := u.Complete(ctx, find, q.Get("state"), q.Get("code"), "", "nonce-1")
	if err != nil || server != "up" || caller != "alice@op" {
		t.Fatalf("complete: %q %q %v", server, caller, err)
	}
	tok, _, err := u.Token(ctx, s, "alice@op")
	if err != nil || !strings.HasPrefix(tok, "access-ALICE-") {
		t.Fatalf("alice's token: %q %v", tok, err)
	}
	if _, _, err := u.Token(ctx, s, "bob@op"); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("bob, who did not sign in: %v", err)
	}
	des, _ := os.ReadDir(filepath.Join(dir, "users", "up"))
	for _, de := range des {
		fi, _ := de.Info()
		if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", de.Name(), fi.Mode())
		}
	}

	// A token that expires within refreshEarly is refreshed before it is
	// handed out: 20 callers at once make one refresh.
	a.set(func(a *upstreamAS) { a.ttl = 5 })
	q = signInAs(t, u, s, "alice@op", "ALICE", "n2")
	if _, _, err := u.Complete(ctx, find, q.Get("state"), q.Get("code"), "", "n2"); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	a.set(func(a *upstreamAS) { a.ttl, a.gate = 3600, gate })
	var wg sync.WaitGroup
	toks := make([]string, 20)
	for i := range toks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], _, _ = u.Token(ctx, s, "alice@op")
		}()
	}
	close(gate)
	wg.Wait()
	a.set(func(a *upstreamAS) {
		if a.refreshes != 1 {
			t.Errorf("%d refreshes for 20 concurrent calls", a.refreshes)
		}
	})
	for _, tk := range toks {
		if tk != toks[0] || !strings.HasPrefix(tk, "access-ALICE-") {
			t.Errorf("tokens after the refresh: %q", toks)
			break
		}
	}

	had, err := u.Logout(ctx, "up", "alice@op")
	if !had || err != nil {
		t.Fatalf("logout: %v %v", had, err)
	}
	a.set(func(a *upstreamAS) {
		if len(a.revoked) != 2 || !strings.HasPrefix(a.revoked[0], "refresh-ALICE-") || a.revoked[1] != toks[0] {
			t.Errorf("revoked: %q", a.revoked)
		}
	})
	if _, _, err := u.Token(ctx, s, "alice@op"); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("after logout: %v", err)
	}

	// A refresh the upstream refuses signs the caller out.
	a.set(func(a *upstreamAS) { a.ttl = 5 })
	q = signInAs(t, u, s, "bob@op", "BOB", "n3")
	if _, _, err := u.Complete(ctx, find, q.Get("state"), q.Get("code"), "", "n3"); err != nil {
		t.Fatal(err)
	}
	a.set(func(a *upstreamAS) { a.refresh = map[string]string{} })
	if _, _, err := u.Token(ctx, s, "bob@op"); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("after a refused refresh: %v", err)
	}
	if callers, err := u.Callers("up", "bob"); err != nil || len(callers) != 0 {
		t.Errorf("bob's sign-in is still stored: %q %v", callers, err)
	}
}

// A link opens only for its server, until it expires, and only with the
// key that sealed it; a flow's state is no link.
func TestUsersLink(t *testing.T) {
	t.Parallel()
	now := time.Now()
	u := NewUsers(UsersOptions{TokenDir: t.TempDir(), Key: []byte("k1"), Now: func() time.Time { return now }})
	l := u.Link("up", "alice@op")
	if c, err := u.OpenLink("up", l); err != nil || c != "alice@op" {
		t.Fatalf("open: %q %v", c, err)
	}
	if _, err := u.OpenLink("other", l); err == nil {
		t.Error("a link opened for another server")
	}
	same := NewUsers(UsersOptions{TokenDir: t.TempDir(), Key: []byte("k1")})
	if c, err := same.OpenLink("up", l); err != nil || c != "alice@op" {
		t.Errorf("another replica with the same key: %q %v", c, err)
	}
	if _, err := NewUsers(UsersOptions{TokenDir: t.TempDir(), Key: []byte("k2")}).OpenLink("up", l); err == nil {
		t.Error("a link opened with another key")
	}
	b := []byte(l)
	b[len(b)/2] ^= 1
	if _, err := u.OpenLink("up", string(b)); err == nil {
		t.Error("an altered link opened")
	}
	flowState := u.seal(flow{Kind: "flow", Server: "up", Caller: "alice@op", Expires: now.Add(time.Hour).Unix()})
	if _, err := u.OpenLink("up", flowState); err == nil {
		t.Error("a flow's state opened as a link")
	}
	now = now.Add(LinkLifetime + time.Second)
	if _, err := u.OpenLink("up", l); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired link: %v", err)
	}
}

// Two replicas share the token directory: one whose refresh is refused
// because the other refreshed first (the refresh token rotated) takes the
// other's sign-in rather than ending it. A token without a refresh token
// is used until it expires.
func TestUsersRefreshEdges(t *testing.T) {
	t.Parallel()
	a := newUpstreamAS(t)
	dir := t.TempDir()
	opts := UsersOptions{TokenDir: dir, Callback: "https://gw.example/upstream/callback", Key: []byte("shared")}
	u1, u2 := NewUsers(opts), NewUsers(opts)
	s := config.Server{Name: "up", URL: a.URL + "/mcp"}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	find := func(name string) (config.Server, bool) { return s, name == s.Name }

	a.set(func(a *upstreamAS) { a.ttl = 10 }) // within refreshEarly: every Token refreshes
	q := signInAs(t, u1, s, "alice@op", "ALICE", "n1")
	if _, _, err := u1.Complete(ctx, find, q.Get("state"), q.Get("code"), "", "n1"); err != nil {
		t.Fatal(err)
	}
	others := make(chan string, 1)
	var first atomic.Bool
	a.set(func(a *upstreamAS) {
		a.onRefresh = func(string) {
			// u1's refresh is held here while u2 refreshes first (u2's
			// own request passes through).
			if !first.CompareAndSwap(false, true) {
				return
			}
			tok, _, err := u2.Token(ctx, s, "alice@op")
			if err != nil {
				t.Errorf("u2's refresh: %v", err)
			}
			others <- tok
		}
	})
	got, _, err := u1.Token(ctx, s, "alice@op")
	other := <-others
	if err != nil || got != other || other == "" {
		t.Fatalf("u1 after u2 refreshed first: %q %v, want u2's %q", got, err, other)
	}
	if !u1.SignedIn(s, "alice@op") {
		t.Error("the race signed alice out")
	}

	a.set(func(a *upstreamAS) { a.onRefresh, a.noRefresh = nil, true })
	q = signInAs(t, u1, s, "bob@op", "BOB", "n2")
	if _, _, err := u1.Complete(ctx, find, q.Get("state"), q.Get("code"), "", "n2"); err != nil {
		t.Fatal(err)
	}
	if tok, _, err := u1.Token(ctx, s, "bob@op"); err != nil || !strings.HasPrefix(tok, "access-BOB-") {
		t.Errorf("a token without a refresh token, 10 s from its expiry: %q %v", tok, err)
	}
}

// Events within one millisecond keep their order: with a clock that does
// not move, a sign-in begun after the last one completed still completes,
// and a link issued before a sign-in is spent by it.
func TestUsersOrderWithinAMillisecond(t *testing.T) {
	t.Parallel()
	a := newUpstreamAS(t)
	frozen := time.Now()
	u := NewUsers(UsersOptions{TokenDir: t.TempDir(), Callback: "https://gw.example/upstream/callback", Now: func() time.Time { return frozen }})
	s := config.Server{Name: "up", URL: a.URL + "/mcp"}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	find := func(name string) (config.Server, bool) { return s, name == s.Name }
	link := u.Link("up", "alice@op")
	for _, nonce := range []string{"n1", "n2"} {
		q := signInAs(t, u, s, "alice@op", "ALICE", nonce)
		if _, _, err := u.Complete(ctx, find, q.Get("state"), q.Get("code"), "", nonce); err != nil {
			t.Fatalf("sign-in %s: %v", nonce, err)
		}
	}
	if _, err := u.OpenLink("up", link); err == nil || !strings.Contains(err.Error(), "was used") {
		t.Fatalf("a link issued before the sign-in: %v, want it spent", err)
	}
}
