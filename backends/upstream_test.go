package backends_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// farAudience is the audience the remote testbackend takes tokens for.
const farAudience = "urn:far"

// jwtFor is an unsigned JWT (the testbackend reads, never verifies, its
// bearer tokens) for sub and aud, expiring at exp.
func jwtFor(sub string, aud any, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(map[string]any{"sub": sub, "aud": aud, "exp": exp.Unix()})
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + ".x"
}

// callerOf is the caller sub would be at the HTTP front, with a token for
// aud.
func callerOf(sub string, aud ...string) *backends.Caller {
	exp := time.Now().Add(time.Hour)
	a := make([]any, len(aud))
	for i, x := range aud {
		a[i] = x
	}
	return &backends.Caller{Subject: sub + "@idp", Token: jwtFor(sub, aud, exp), Claims: map[string]any{"sub": sub, "aud": a}, Expires: exp}
}

// tokenEndpoint is a small RFC 8693 / RFC 7523 token endpoint: it takes
// the client gw with secret s3cret (client_secret_basic) or, given key, a
// private_key_jwt assertion signed by it; it exchanges a caller's token
// (subject_token, or a jwt-bearer grant's assertion) for a JWT of the same
// subject meant for the requested audience.
type tokenEndpoint struct {
	*httptest.Server
	key *ecdsa.PublicKey

	mu    sync.Mutex
	forms []map[string]string // the exchanges it answered
	// hold, when set, holds each exchange until it is closed.
	hold chan struct{}
	got  chan struct{} // a request arrived (capacity 1)
}

func newTokenEndpoint(t *testing.T) *tokenEndpoint {
	te := &tokenEndpoint{got: make(chan struct{}, 1)}
	te.Server = httptest.NewServer(http.HandlerFunc(te.serve))
	t.Cleanup(te.Close)
	return te
}

func (te *tokenEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	select {
	case te.got <- struct{}{}:
	default:
	}
	fail := func(status int, code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		fail(400, "invalid_request", err.Error())
		return
	}
	te.mu.Lock()
	hold := te.hold
	te.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if !te.clientOK(r) {
		fail(401, "invalid_client", "client authentication failed")
		return
	}
	var subject string
	switch r.PostForm.Get("grant_type") {
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		if r.PostForm.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" {
			fail(400, "invalid_request", "subject_token_type")
			return
		}
		subject = r.PostForm.Get("subject_token")
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		subject = r.PostForm.Get("assertion")
	default:
		fail(400, "unsupported_grant_type", r.PostForm.Get("grant_type"))
		return
	}
	parts := strings.Split(subject, ".")
	var claims struct {
		Sub string `json:"sub"`
	}
	if len(parts) != 3 {
		fail(400, "invalid_grant", "not a JWT")
		return
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(payload, &claims) != nil || claims.Sub == "" || claims.Sub == "mallory" {
		fail(400, "invalid_grant", "the subject token is not accepted")
		return
	}
	form := map[string]string{}
	for k := range r.PostForm {
		form[k] = r.PostForm.Get(k)
	}
	te.mu.Lock()
	te.forms = append(te.forms, form)
	te.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": jwtFor(claims.Sub, r.PostForm.Get("audience"), time.Now().Add(time.Hour)), "token_type": "Bearer",
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "expires_in": 3600,
	})
}

// clientOK checks the client's authentication.
func (te *tokenEndpoint) clientOK(r *http.Request) bool {
	if te.key == nil {
		id, secret, ok := r.BasicAuth()
		return ok && id == "gw" && secret == "s3cret"
	}
	if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || r.PostForm.Get("client_id") != "gw" {
		return false
	}
	tok, err := jwt.ParseSigned(r.PostForm.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || tok.Headers[0].KeyID != "k1" {
		return false
	}
	var c jwt.Claims
	if tok.Claims(te.key, &c) != nil {
		return false
	}
	return c.Issuer == "gw" && c.Subject == "gw" && c.Audience.Contains(te.URL+"/token") &&
		c.ValidateWithLeeway(jwt.Expected{Time: time.Now()}, 0) == nil
}

func (te *tokenEndpoint) exchanges() []map[string]string {
	te.mu.Lock()
	defer te.mu.Unlock()
	return slices.Clone(te.forms)
}

// startFar runs the testbackend on Streamable HTTP, taking only tokens
// for farAudience (and given the testbackend's args), and returns its /mcp URL.
func startFar(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbackend, append([]string{"-http", "127.0.0.1:0", "-http-audience", farAudience}, args...)...)
	stderr := new(testutil.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	listening := regexp.MustCompile(`listening on (\S+)`)
	var addr string
	testutil.WaitFor(t, testutil.DefaultTimeout, "testbackend -http to listen", func() bool {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return "http://" + addr + "/mcp"
}

// exchanged is a url: server reached by token exchange at te.
func exchanged(url string, te *tokenEndpoint) config.Server {
	return config.Server{Name: "far", URL: url, Enabled: true, Prefix: "far", Restart: "on-failure",
		UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamTokenExchange, TokenURL: te.URL + "/token", Audience: farAudience,
			Resource: "https://far.example/mcp", Scopes: []string{"read", "write"}, ClientID: "gw", ClientSecretEnv: "GW_SECRET"}}
}

func withSecret(o *backends.Options) { o.Environ = append(os.Environ(), "GW_SECRET=s3cret") }

// whoamiAs calls far's whoami for c and returns the subject the server
// saw.
func whoamiAs(t *testing.T, e *env, c *backends.Caller) string {
	t.Helper()
	res, err := e.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: c})
	if err != nil {
		t.Fatalf("whoami as %s: %v", c.Subject, err)
	}
	var r struct {
		SC struct{ Subject string } `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("whoami: %s", res)
	}
	return r.SC.Subject
}

// Two callers of one tool are each themselves at the server: each one's
// token is exchanged (RFC 8693, the client by its secret, audience,
// resource and scopes as configured) for one of their own, on a session
// of their own.
func TestUpstreamTokenExchangePerCaller(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged(startFar(t), te)}, withSecret)
	alice, bob := callerOf("alice", "urn:gateway"), callerOf("bob", "urn:gateway")
	if got := whoamiAs(t, e, alice); got != "alice" {
		t.Errorf("alice's call reached the server as %q", got)
	}
	if got := whoamiAs(t, e, bob); got != "bob" {
		t.Errorf("bob's call reached the server as %q", got)
	}
	if got := whoamiAs(t, e, alice); got != "alice" {
		t.Errorf("alice's second call reached the server as %q", got)
	}
	x := te.exchanges()
	if len(x) != 2 {
		t.Fatalf("%d exchanges, want 2 (one per caller, the token kept)", len(x))
	}
	for i, who := range []*backends.Caller{alice, bob} {
		want := map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "subject_token": who.Token,
			"subject_token_type": "urn:ietf:params:oauth:token-type:access_token", "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
			"audience": farAudience, "resource": "https://far.example/mcp", "scope": "read write"}
		for k, v := range want {
			if x[i][k] != v {
				t.Errorf("exchange %d: %s = %q, want %q", i, k, x[i][k], v)
			}
		}
	}
	if n := e.CallerSessions("far"); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
	if got := toolNames(e.ToolsFor(alice)); !slices.Contains(got, "far/whoami") {
		t.Errorf("alice is shown %v: the server's own, as her session listed them", got)
	}
	for _, h := range e.ListHintsFor("tools/list", alice) {
		if !h.Private {
			t.Errorf("tools/list hint %+v: a per-caller server's list is private", h)
		}
	}
}

// A request without a caller — stdio, the command line — is refused, and
// no one's credential or session is used for it.
func TestUpstreamNoCaller(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged(startFar(t), te)}, withSecret)
	whoamiAs(t, e, callerOf("alice", "urn:gateway")) // a session exists: still not the anonymous request's
	for _, opts := range []backends.CallOptions{{}, {Caller: &backends.Caller{}}} {
		_, err := e.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), opts)
		var ce *backends.CallerError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "stdio and the command line have no caller") {
			t.Errorf("a call without a caller: %v, want a *CallerError", err)
		}
		_, err = e.Request(context.Background(), "far", "tools/list", nil, opts)
		if !errors.As(err, &ce) {
			t.Errorf("a request without a caller: %v, want a *CallerError", err)
		}
	}
	if n := len(te.exchanges()); n != 1 {
		t.Errorf("%d exchanges, want alice's only", n)
	}
	// A caller whose token the endpoint refuses is told why.
	_, err := e.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: callerOf("mallory", "urn:gateway")})
	var ce *backends.CallerError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("mallory: %v, want a *CallerError with the endpoint's refusal", err)
	}
}

// A hundred first calls at once by one caller make one exchange and one
// session.
func TestUpstreamOneExchangeForConcurrentFirstCalls(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	te.hold = make(chan struct{})
	e := start(t, []config.Server{exchanged(startFar(t), te)}, withSecret)
	alice := callerOf("alice", "urn:gateway")
	const n = 100
	errs := make(chan error, n)
	for range n {
		e.StartToolCall("far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: alice}, func(res json.RawMessage, err error) {
			if err == nil && !strings.Contains(string(res), `"alice"`) {
				err = fmt.Errorf("result %s", res)
			}
			errs <- err
		})
	}
	<-te.got // the first exchange is held: every call has started meanwhile
	close(te.hold)
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if x := len(te.exchanges()); x != 1 {
		t.Errorf("%d exchanges for %d concurrent first calls, want 1", x, n)
	}
	if s := e.CallerSessions("far"); s != 1 {
		t.Errorf("%d sessions, want 1", s)
	}
}

// A caller's own token is passed through only to the server it is meant
// for: one meant for the gateway is refused, and never sent.
func TestUpstreamPassthroughAudience(t *testing.T) {
	t.Parallel()
	far := startFar(t)
	e := start(t, []config.Server{{Name: "far", URL: far, Enabled: true, Prefix: "far", Restart: "on-failure",
		UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamPassthrough, Audience: farAudience}}}, nil)
	for _, c := range []*backends.Caller{callerOf("eve", "urn:gateway"), callerOf("eve"), callerOf("eve", farAudience+"/other")} {
		_, err := e.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: c})
		var ce *backends.CallerError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "not meant for it") {
			t.Errorf("a token for %v: %v, want a *CallerError", c.Claims["aud"], err)
		}
	}
	if n := e.CallerSessions("far"); n != 0 {
		t.Errorf("%d sessions made for refused tokens", n)
	}
	if got := whoamiAs(t, e, callerOf("carol", "urn:gateway", farAudience)); got != "carol" {
		t.Errorf("carol's token for the server: reached it as %q", got)
	}
}

// The sessions are bounded: beyond MaxCallerSessions the least recently
// used is closed (its caller's next call makes a new one), and idle ones
// are closed after CallerIdle.
func TestUpstreamSessionsBounded(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged(startFar(t), te)}, func(o *backends.Options) {
		withSecret(o)
		o.MaxCallerSessions = 2
	})
	for _, who := range []string{"a", "b", "c"} {
		whoamiAs(t, e, callerOf(who, "urn:gateway"))
	}
	if n := e.CallerSessions("far"); n != 2 {
		t.Errorf("%d sessions after three callers, want 2", n)
	}
	if got := whoamiAs(t, e, callerOf("a", "urn:gateway")); got != "a" {
		t.Errorf("a again: %q", got)
	}
	if x := len(te.exchanges()); x != 4 {
		t.Errorf("%d exchanges, want 4: a's session was closed, and its next call made another", x)
	}

	idle := start(t, []config.Server{exchanged(startFar(t), te)}, func(o *backends.Options) {
		withSecret(o)
		o.CallerIdle = time.Millisecond
	})
	whoamiAs(t, idle, callerOf("a", "urn:gateway"))
	testutil.WaitFor(t, testutil.DefaultTimeout, "the idle session to close", func() bool { return idle.CallerSessions("far") == 0 })
}

// jwt_bearer (RFC 7523) sends the caller's token as the grant's
// assertion, and the client may authenticate with a private-key JWT.
func TestUpstreamJWTBearerPrivateKey(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyFile := filepath.Join(t.TempDir(), "gw.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	te := newTokenEndpoint(t)
	te.key = &key.PublicKey
	s := exchanged(startFar(t), te)
	s.UpstreamAuth.Mode, s.UpstreamAuth.ClientSecretEnv = config.UpstreamJWTBearer, ""
	s.UpstreamAuth.ClientKeyFile, s.UpstreamAuth.ClientKeyID = keyFile, "k1"
	e := start(t, []config.Server{s}, nil)
	dave := callerOf("dave", "urn:gateway")
	if got := whoamiAs(t, e, dave); got != "dave" {
		t.Errorf("dave reached the server as %q", got)
	}
	x := te.exchanges()
	if len(x) != 1 || x[0]["grant_type"] != "urn:ietf:params:oauth:grant-type:jwt-bearer" || x[0]["assertion"] != dave.Token || x[0]["subject_token"] != "" {
		t.Errorf("exchanges %v, want one jwt-bearer grant with dave's token as the assertion", x)
	}
}

// A per_user_login server's caller who has not signed in is told so
// (*SignInError), and no session is made.
func TestUpstreamPerUserLoginNotSignedIn(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{{Name: "far", URL: startFar(t), Enabled: true, Prefix: "far", Restart: "on-failure",
		UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamPerUserLogin}}}, nil)
	_, err := e.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: callerOf("erin", "urn:gateway")})
	var se *backends.SignInError
	if !errors.As(err, &se) || se.Server != "far" || se.Subject != "erin@idp" {
		t.Errorf("err = %v, want a *SignInError for erin", err)
	}
	if n := e.CallerSessions("far"); n != 0 {
		t.Errorf("%d sessions", n)
	}
}

// A server reached per caller has no shared sign-in: login says so at
// once rather than wait for a session that never comes.
func TestUpstreamLoginRefused(t *testing.T) {
	t.Parallel()
	s := config.Server{Name: "far", URL: "http://127.0.0.1:1/mcp", Enabled: true, UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamTokenExchange}}
	_, err := backends.Login(context.Background(), s, backends.Options{TokenDir: t.TempDir(), Authorize: func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		return nil, errors.New("no browser here")
	}})
	if err == nil || !strings.Contains(err.Error(), "not with a sign-in of its own") {
		t.Errorf("Login: %v", err)
	}
}

// An exchanged token is replaced shortly before it expires: the next call
// after that point exchanges the caller's token again, and reaches the
// server with the new one.
func TestUpstreamRefreshBeforeExpiry(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t) // its tokens live an hour (expires_in 3600)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	e := start(t, []config.Server{exchanged(startFar(t), te)}, func(o *backends.Options) {
		withSecret(o)
	})
	backends.SetClock(e.Manager, clock)
	alice := callerOf("alice", "urn:gateway")
	alice.Expires = time.Now().Add(48 * time.Hour)
	whoamiAs(t, e, alice)
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	advance(time.Hour - 31*time.Second) // 31 s left: kept
	whoamiAs(t, e, alice)
	if n := len(te.exchanges()); n != 1 {
		t.Errorf("31 s before expiry: %d exchanges, want 1", n)
	}
	advance(2 * time.Second) // 29 s left: replaced before use
	if got := whoamiAs(t, e, alice); got != "alice" {
		t.Errorf("after the refresh: %q", got)
	}
	if n := len(te.exchanges()); n != 2 {
		t.Errorf("29 s before expiry: %d exchanges, want 2", n)
	}
}

// A client secret that is not set fails the server, with the reason, and
// every request to it.
func TestUpstreamSecretUnset(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged("http://127.0.0.1:1/mcp", te)}, func(o *backends.Options) { o.Environ = []string{"PATH=/usr/bin"} })
	if st := e.status(t, "far"); st.State != backends.Failed || !strings.Contains(st.Error, "GW_SECRET is not set") {
		t.Errorf("status %+v", st)
	}
	_, err := e.CallTool(context.Background(), "far", "whoami", json.RawMessage(`{}`), backends.CallOptions{Caller: callerOf("a", "urn:gateway")})
	var se *backends.ServerError
	if !errors.As(err, &se) || se.State != backends.Failed || !strings.Contains(se.Reason, "GW_SECRET is not set") {
		t.Errorf("call: %v", err)
	}
}

// Each caller is shown their own session's lists, as it listed them: a's
// listed before the server added a tool, b's after; a's session, closed
// for b's (at most one), shows a nothing until a comes back.
func TestUpstreamListsOwnSession(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t)
	e := start(t, []config.Server{exchanged(startFar(t), te)}, func(o *backends.Options) {
		withSecret(o)
		o.MaxCallerSessions = 1
	})
	a, b := callerOf("a", "urn:gateway"), callerOf("b", "urn:gateway")
	// The server adds a tool (its list_changed has no stream to go to, so
	// a's session keeps its list).
	if _, err := e.CallTool(context.Background(), "far", "change", json.RawMessage(`{}`), backends.CallOptions{Caller: a}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(e.ToolsFor(a)); !slices.Contains(got, "far/whoami") || slices.Contains(got, "far/added_1") {
		t.Fatalf("a is shown %v: want a's session's list, from before the change", got)
	}
	whoamiAs(t, e, b) // a's session is closed for b's
	testutil.WaitFor(t, testutil.DefaultTimeout, "b's session's list, with added_1", func() bool {
		return slices.Contains(toolNames(e.ToolsFor(b)), "far/added_1")
	})
	testutil.WaitFor(t, testutil.DefaultTimeout, "a's closed session to show a nothing", func() bool {
		return len(e.ToolsFor(a)) == 0
	})
}

// A request a caller's own session gets from the server (roots/list
// here) names that caller (backends.RequestCaller), so that the gateway
// asks that caller's client and no other.
func TestUpstreamRequestCaller(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		//lint:ignore SA1019 roots are deprecated from protocol 2026-07-28 on; 2025-11-25 servers still ask, and the gateway forwards it.
		if _, err := req.Session.ListRoots(ctx, nil); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "asked"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	var mu sync.Mutex
	var asked []string
	e := startAnswering(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Prefix: "far", Restart: "on-failure",
		UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamPassthrough, Audience: farAudience}}}, nil,
		func(ctx context.Context, server, method string, _ json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			asked = append(asked, method+" of "+backends.RequestCaller(ctx))
			mu.Unlock()
			return json.RawMessage(`{"roots":[]}`), nil
		})
	for _, who := range []string{"alice", "bob"} {
		if _, err := e.CallTool(context.Background(), "far", "ask", json.RawMessage(`{}`), backends.CallOptions{Caller: callerOf(who, farAudience)}); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{"roots/list of alice@idp", "roots/list of bob@idp"}) {
		t.Errorf("the server's requests: %q", asked)
	}
}

// A caller's session's log messages are that person's: kept to the
// gateway's log, not passed to the clients (Hooks.Notification), which
// are everyone's who sees the server.
func TestUpstreamLogsStayPrivate(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "say"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 on; 2025-11-25 servers still log, and the gateway forwards it.
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "alice's private note"}); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "said"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	log := &testutil.LogRecorder{}
	m := backends.New(backends.Options{Logger: log.Logger(), Servers: []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Prefix: "far", Restart: "on-failure",
		UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamPassthrough, Audience: farAudience}}}})
	var mu sync.Mutex
	var notified []string
	m.SetHooks(backends.Hooks{Notification: func(server, method string, params json.RawMessage) {
		mu.Lock()
		notified = append(notified, method+" "+string(params))
		mu.Unlock()
	}})
	m.Start(context.Background())
	t.Cleanup(func() { m.Close() })
	m.SetLogLevel(context.Background(), "debug") // replayed to each new session
	if _, err := m.CallTool(context.Background(), "far", "say", json.RawMessage(`{}`), backends.CallOptions{Caller: callerOf("alice", farAudience)}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the message in the gateway's log", func() bool {
		return strings.Contains(strings.Join(log.Lines(), "\n"), "alice's private note")
	})
	mu.Lock()
	defer mu.Unlock()
	if len(notified) != 0 {
		t.Errorf("passed to the clients: %q", notified)
	}
}
