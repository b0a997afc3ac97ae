package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

const resource = "https://gw.example.com/mcp"

// issuer is an authorization server of the tests: discovery, a JWKS that
// can rotate, and introspection of the opaque tokens it was told of.
type issuer struct {
	srv      *httptest.Server
	mu       sync.Mutex
	keys     []*ecdsa.PrivateKey
	kids     []string
	jwksGets atomic.Int32
	opaque   map[string]map[string]any // token → introspection answer
	// hold, when set before the first request, is called by each JWKS
	// request before it is answered (a test holds the fetch there).
	hold func()
	// down makes the JWKS answer 503.
	down atomic.Bool
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{opaque: map[string]map[string]any{}}
	is.rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/keys"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		is.jwksGets.Add(1)
		if is.hold != nil {
			is.hold()
		}
		if is.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		is.mu.Lock()
		defer is.mu.Unlock()
		var set jose.JSONWebKeySet
		for i, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: is.kids[i], Algorithm: "ES256", Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		if id, secret, _ := r.BasicAuth(); id != "gw" || secret != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		is.mu.Lock()
		ans, ok := is.opaque[r.FormValue("token")]
		is.mu.Unlock()
		if !ok {
			ans = map[string]any{"active": false}
		}
		json.NewEncoder(w).Encode(ans)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// rotate adds a new signing key, which signs from now on.
func (is *issuer) rotate() {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = append(is.keys, k)
	is.kids = append(is.kids, rand.Text()[:8])
}

// sign makes a token with claims, signed with the newest key (or key).
func (is *issuer) sign(t *testing.T, claims map[string]any, key *ecdsa.PrivateKey, kid string) string {
	t.Helper()
	is.mu.Lock()
	if key == nil {
		key, kid = is.keys[len(is.keys)-1], is.kids[len(is.kids)-1]
	}
	is.mu.Unlock()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (is *issuer) claims(now time.Time, extra map[string]any) map[string]any {
	c := map[string]any{"iss": is.srv.URL, "sub": "alice", "aud": []string{resource}, "exp": now.Add(time.Hour).Unix(),
		"iat": now.Unix(), "scope": "mcp read", "groups": []string{"team-a"}, "client_id": "cli"}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func newVerifier(now *time.Time, issuers ...Issuer) *Verifier {
	return New(Options{Resource: resource, Issuers: issuers, Scopes: []string{"mcp"}, Now: func() time.Time { return *now }})
}

func wantInvalid(t *testing.T, err error, contains string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != "invalid_token" || e.Unavailable || !strings.Contains(e.Description, contains) {
		t.Errorf("error = %v, want invalid_token containing %q", err, contains)
	}
}

func TestVerifyJWT(t *testing.T) {
	is := newIssuer(t)
	other := newIssuer(t)
	now := time.Now()
	v := newVerifier(&now, Issuer{Issuer: is.srv.URL}, Issuer{Issuer: "https://api-only.example", Audiences: []string{"api://gw"}})
	ctx := context.Background()

	p, err := v.Verify(ctx, is.sign(t, is.claims(now, nil), nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if p.Key != "alice@"+is.srv.URL || p.Subject != "alice" || p.ClientID != "cli" || strings.Join(p.Scopes, ",") != "mcp,read" ||
		strings.Join(p.Groups, ",") != "team-a" || p.Auth != "oauth" || p.Claims["client_id"] != "cli" {
		t.Errorf("principal = %+v", p)
	}
	if m := p.HasScopes([]string{"mcp", "write"}); len(m) != 1 || m[0] != "write" {
		t.Errorf("missing scopes = %v, want [write]", m)
	}
	// The token is kept for upstream_auth, and never printed.
	tok := is.sign(t, is.claims(now, map[string]any{"jti": "other"}), nil, "")
	if p, err = v.Verify(ctx, tok); err != nil || p.Bearer() != tok {
		t.Errorf("Bearer() = %q, %v; want the token", p.Bearer(), err)
	}
	if s := fmt.Sprintf("%v %+v", p, p); strings.Contains(s, tok) {
		t.Errorf("a printed principal shows its token: %s", s)
	}

	evil, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, tc := range map[string]struct {
		token string
		want  string
	}{
		"expired":        {is.sign(t, is.claims(now, map[string]any{"exp": now.Add(-time.Minute).Unix()}), nil, ""), "expired"},
		"not yet":        {is.sign(t, is.claims(now, map[string]any{"nbf": now.Add(time.Minute).Unix()}), nil, ""), "not valid before"},
		"no exp":         {is.sign(t, is.claims(now, map[string]any{"exp": nil}), nil, ""), "no expiry"},
		"no sub":         {is.sign(t, is.claims(now, map[string]any{"sub": nil}), nil, ""), "no subject"},
		"other audience": {is.sign(t, is.claims(now, map[string]any{"aud": "https://other.example/mcp"}), nil, ""), "not for this resource"},
		"other issuer":   {other.sign(t, other.claims(now, nil), nil, ""), "is not one the gateway accepts"},
		"forged iss":     {other.sign(t, is.claims(now, nil), nil, ""), "no signing key"},
		"wrong key, same kid": {is.sign(t, is.claims(now, nil), evil, is.kids[0]),
			"signature does not verify"},
		"not a JWT":   {"opaque-token", "not a JWT"},
		"alg none":    {"eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.", "asymmetric"},
		"HS256":       {"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln", "asymmetric"},
		"within skew": {is.sign(t, is.claims(now, map[string]any{"exp": now.Add(-Leeway / 2).Unix()}), nil, ""), ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := v.Verify(ctx, tc.token)
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused within the leeway: %v", err)
				}
				return
			}
			wantInvalid(t, err, tc.want)
		})
	}
}

// TestVerifyKeyRotation: a token signed with a key the cached set lacks
// makes the set be fetched again at once; tokens with made-up key ids do
// not fetch it more often than every minRefetch; after keysTTL the set is
// fetched again.
func TestVerifyKeyRotation(t *testing.T) {
	is := newIssuer(t)
	now := time.Now()
	v := newVerifier(&now, Issuer{Issuer: is.srv.URL})
	ctx := context.Background()
	if _, err := v.Verify(ctx, is.sign(t, is.claims(now, nil), nil, "")); err != nil {
		t.Fatal(err)
	}
	if n := is.jwksGets.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", n)
	}
	now = now.Add(minRefetch)
	is.rotate()
	if _, err := v.Verify(ctx, is.sign(t, is.claims(now, nil), nil, "")); err != nil {
		t.Fatalf("token of the rotated key: %v", err)
	}
	if n := is.jwksGets.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times after the rotation, want 2", n)
	}
	for i := range 5 {
		_, err := v.Verify(ctx, is.sign(t, is.claims(now, map[string]any{"jti": string(rune('a' + i))}), is.keys[0], "made-up"))
		wantInvalid(t, err, "no signing key")
	}
	if n := is.jwksGets.Load(); n != 2 {
		t.Errorf("made-up key ids fetched the JWKS: %d fetches, want 2", n)
	}
	now = now.Add(keysTTL + time.Second)
	if _, err := v.Verify(ctx, is.sign(t, is.claims(now, map[string]any{"jti": "x"}), nil, "")); err != nil {
		t.Fatal(err)
	}
	if n := is.jwksGets.Load(); n != 3 {
		t.Errorf("JWKS fetched %d times after its TTL, want 3", n)
	}
}

// TestVerifyCache: a token is checked once; its principal is kept until it
// expires, a refusal for a few seconds.
func TestVerifyCache(t *testing.T) {
	is := newIssuer(t)
	now := time.Now()
	v := newVerifier(&now, Issuer{Issuer: is.srv.URL})
	ctx := context.Background()
	tok := is.sign(t, is.claims(now, map[string]any{"exp": now.Add(time.Minute).Unix()}), nil, "")
	p1, err := v.Verify(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := v.Verify(ctx, tok)
	if p1 != p2 {
		t.Error("the same token was checked twice")
	}
	now = now.Add(time.Minute + Leeway + time.Second)
	_, err = v.Verify(ctx, tok)
	wantInvalid(t, err, "expired")
}

func TestVerifyUnavailable(t *testing.T) {
	now := time.Now()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	v := newVerifier(&now, Issuer{Issuer: dead.URL})
	is := newIssuer(t)
	_, err := v.Verify(context.Background(), is.sign(t, is.claims(now, map[string]any{"iss": dead.URL}), nil, ""))
	var e *Error
	if !errors.As(err, &e) || !e.Unavailable {
		t.Errorf("error = %v, want unavailable", err)
	}
}

func TestIntrospection(t *testing.T) {
	is := newIssuer(t)
	now := time.Now()
	is.opaque["good"] = map[string]any{"active": true, "sub": "bob", "iss": is.srv.URL, "aud": []string{"x", resource},
		"exp": float64(now.Add(time.Hour).Unix()), "scope": "mcp", "client_id": "c"}
	is.opaque["elsewhere"] = map[string]any{"active": true, "sub": "bob", "aud": "https://other.example"}
	is.opaque["noaud"] = map[string]any{"active": true, "sub": "carol"} // vouched for by the issuer
	is.opaque["old"] = map[string]any{"active": true, "sub": "bob", "aud": resource, "exp": float64(now.Add(-time.Hour).Unix())}
	v := newVerifier(&now, Issuer{Issuer: is.srv.URL, IntrospectionURL: is.srv.URL + "/introspect", ClientID: "gw", ClientSecret: "s3cret"})
	ctx := context.Background()
	p, err := v.Verify(ctx, "good")
	if err != nil || p.Subject != "bob" || p.Key != "bob@"+is.srv.URL || p.ClientID != "c" {
		t.Fatalf("good: %+v, %v", p, err)
	}
	if p, err := v.Verify(ctx, "noaud"); err != nil || p.Subject != "carol" {
		t.Errorf("an active token without aud: %+v, %v", p, err)
	}
	_, err = v.Verify(ctx, "unknown")
	wantInvalid(t, err, "not active")
	_, err = v.Verify(ctx, "elsewhere")
	wantInvalid(t, err, "not for this resource")
	_, err = v.Verify(ctx, "old")
	wantInvalid(t, err, "expired")

	bad := newVerifier(&now, Issuer{Issuer: is.srv.URL, IntrospectionURL: is.srv.URL + "/introspect", ClientID: "gw", ClientSecret: "wrong"})
	_, err = bad.Verify(ctx, "good")
	var e *Error
	if !errors.As(err, &e) || !e.Unavailable {
		t.Errorf("introspection refused: error = %v, want unavailable", err)
	}
}

func TestMetadataAndChallenge(t *testing.T) {
	if got := MetadataURL("https://gw.example.com/mcp"); got != "https://gw.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("MetadataURL = %s", got)
	}
	if got := MetadataPath("https://gw.example.com"); got != "/.well-known/oauth-protected-resource" {
		t.Errorf("MetadataPath of a bare host = %s", got)
	}
	v := New(Options{Resource: resource, Issuers: []Issuer{{Issuer: "https://a.example"}, {Issuer: "https://b.example"}},
		Scopes: []string{"mcp"}, ScopesSupported: []string{"mcp", "mcp:write"}})
	var doc map[string]any
	if err := json.Unmarshal(v.Metadata(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["resource"] != resource || len(doc["authorization_servers"].([]any)) != 2 || len(doc["scopes_supported"].([]any)) != 2 {
		t.Errorf("metadata = %v", doc)
	}
	for _, tc := range []struct {
		e      *Error
		scopes []string
		want   string
	}{
		{nil, []string{"mcp"}, `Bearer scope="mcp", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"`},
		{&Error{Code: "invalid_token", Description: `bad "x"` + "\n"}, nil,
			`Bearer error="invalid_token", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp", error_description="bad 'x'?"`},
		{&Error{Code: "insufficient_scope"}, []string{"mcp", "mcp:write"},
			`Bearer error="insufficient_scope", scope="mcp mcp:write", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"`},
	} {
		if got := Challenge(resource, tc.e, tc.scopes); got != tc.want {
			t.Errorf("Challenge =\n%s\nwant\n%s", got, tc.want)
		}
	}
}

// holdJWKS makes the issuer's JWKS requests wait until release is closed
// (at the end of the test at the latest); entered is closed when the first
// one arrives. Call it before the issuer's first request.
func (is *issuer) holdJWKS(t *testing.T) (entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	var first, done sync.Once
	is.hold = func() {
		first.Do(func() { close(in) })
		<-out
	}
	release = func() { done.Do(func() { close(out) }) }
	t.Cleanup(release)
	return in, release
}

// TestJWKSRefetchBlocksNobody: while a refetch of the JWKS hangs (a token
// with a new key id started it), a token whose key is known is verified
// with the keys at hand; it does not wait for the fetch.
func TestJWKSRefetchBlocksNobody(t *testing.T) {
	is := newIssuer(t)
	entered, release := is.holdJWKS(t)
	now := time.Now()
	v := newVerifier(&now, Issuer{Issuer: is.srv.URL})
	ctx := context.Background()
	first := is.sign(t, is.claims(now, nil), nil, "")
	go func() { v.Verify(ctx, first) }()
	<-entered
	release()
	if _, err := v.Verify(ctx, first); err != nil { // waits for that fetch
		t.Fatal(err)
	}
	is.mu.Lock()
	oldKey, oldKid := is.keys[0], is.kids[0]
	is.mu.Unlock()

	// The next fetch hangs until released.
	entered, release = is.holdJWKS(t)
	now = now.Add(minRefetch)
	is.rotate()
	rotated := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, is.sign(t, is.claims(now, nil), nil, ""))
		rotated <- err
	}()
	<-entered

	known := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, is.sign(t, is.claims(now, map[string]any{"jti": "k"}), oldKey, oldKid))
		known <- err
	}()
	if err := <-known; err != nil {
		t.Errorf("token of a known key during the refetch: %v", err)
	}
	select {
	case err := <-rotated:
		t.Errorf("the token of a known key was verified only after the refetch of the JWKS ended (%v)", err)
		rotated <- nil
	default:
	}
	release()
	if err := <-rotated; err != nil {
		t.Errorf("token of the rotated key: %v", err)
	}
	if n := is.jwksGets.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want 2", n)
	}
}

// TestJWKSFetchedOnce: while no keys are known, 50 concurrent requests
// (new tokens, no cache) make one JWKS fetch between them; a failed fetch
// counts for the throttle too, and the next fetch waits minRefetch.
func TestJWKSFetchedOnce(t *testing.T) {
	for _, down := range []bool{true, false} {
		t.Run(map[bool]string{true: "failing", false: "unknown kid"}[down], func(t *testing.T) {
			is := newIssuer(t)
			is.down.Store(down)
			entered, release := is.holdJWKS(t)
			now := time.Now()
			v := newVerifier(&now, Issuer{Issuer: is.srv.URL})
			ctx := context.Background()
			evil, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			const n = 50
			errs := make(chan error, n)
			for i := range n {
				tok := is.sign(t, is.claims(now, map[string]any{"jti": fmt.Sprint(i)}), evil, fmt.Sprint("made-up-", i))
				go func() {
					_, err := v.Verify(ctx, tok)
					errs <- err
				}()
			}
			<-entered
			release()
			for range n {
				var e *Error
				if err := <-errs; !errors.As(err, &e) || e.Unavailable != down {
					t.Errorf("error = %v, want invalid_token (unavailable: %v)", err, down)
				}
			}
			if got := is.jwksGets.Load(); got != 1 {
				t.Errorf("%d requests fetched the JWKS %d times, want 1", n, got)
			}
			is.down.Store(false)
			_, err := v.Verify(ctx, is.sign(t, is.claims(now, map[string]any{"jti": "later"}), nil, ""))
			var e *Error
			if down && (!errors.As(err, &e) || !e.Unavailable) {
				t.Errorf("within minRefetch of the failed fetch: error = %v, want unavailable", err)
			} else if !down && err != nil {
				t.Errorf("token of a known key: %v", err)
			}
			if got := is.jwksGets.Load(); got != 1 {
				t.Errorf("JWKS fetched %d times within minRefetch, want 1", got)
			}
			now = now.Add(minRefetch)
			_, err = v.Verify(ctx, is.sign(t, is.claims(now, map[string]any{"jti": "after"}), evil, "made-up"))
			wantInvalid(t, err, "no signing key")
			if got := is.jwksGets.Load(); got != 2 {
				t.Errorf("JWKS fetched %d times after minRefetch, want 2", got)
			}
		})
	}
}
