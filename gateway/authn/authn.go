// Package authn authenticates the HTTP front's callers (docs/teams.md): as
// an OAuth 2.1 resource server, it checks access tokens — JWTs against the
// signing keys of the configured issuers, opaque tokens by RFC 7662
// introspection — and says who the caller is (a Principal). It also writes
// what a client needs to find the authorization server: the protected
// resource metadata of RFC 9728 and the WWW-Authenticate challenges.
package authn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config/policy"
)

// Principal is who a request comes from.
type Principal struct {
	// Key identifies the caller for rate limits, sessions and the audit
	// log: "SUBJECT@ISSUER" for an OAuth token, "token:" and a digest of
	// the shared token, "anonymous:" and the client's address.
	Key string
	policy.Identity
	// Expires is when the token stops being valid (zero: never).
	Expires time.Time
	// bearer is the OAuth token the principal is of (Bearer).
	bearer string

	decided atomic.Pointer[decided]
}

type decided struct {
	p *policy.Policy
	d *policy.Decision
}

// Decision is what p decides for the principal, evaluated once per
// principal (a token is checked once and its principal kept, so once per
// token) and then reused.
func (pr *Principal) Decision(p *policy.Policy) *policy.Decision {
	if p == nil {
		return nil
	}
	if d := pr.decided.Load(); d != nil && d.p == p {
		return d.d
	}
	d := p.Decide(pr.Identity)
	pr.decided.Store(&decided{p, d})
	return d
}

// Same reports whether two principals are one caller: the same subject of
// the same issuer, the same shared token, or both anonymous (whatever
// their addresses: without authentication, nobody's requests can be told
// from another's).
func (pr *Principal) Same(o *Principal) bool {
	switch {
	case pr == nil || o == nil:
		return pr == o
	case pr.Auth == "none" && o.Auth == "none":
		return true
	}
	return pr.Key == o.Key
}

// HasScopes returns the scopes of want the principal lacks.
func (pr *Principal) HasScopes(want []string) (missing []string) {
	for _, s := range want {
		if !slices.Contains(pr.Scopes, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// Bearer is the OAuth access token the principal was read from, as the
// client presented it: what a server with upstream_auth is reached with
// (exchanged, or passed through). "" for any other principal. Never log it.
func (pr *Principal) Bearer() string { return pr.bearer }

// String is the principal's key: printing a principal, or logging it,
// never shows its token.
func (pr *Principal) String() string { return pr.Key }

// Token returns the principal of a request made with the shared token
// (gateway.http.auth: token): every holder of the token is one caller.
func Token(token []byte) *Principal {
	sum := sha256.Sum256(token)
	return &Principal{Key: "token:" + hex.EncodeToString(sum[:4]), Identity: policy.Identity{Auth: "token"}}
}

// Anonymous returns the principal of a request without authentication
// (gateway.http.auth: none), told apart by its client's address.
func Anonymous(addr string) *Principal {
	return &Principal{Key: "anonymous:" + addr, Identity: policy.Identity{Auth: "none"}}
}

// Error is why a token was refused: RFC 6750's error code and a
// description, both for the WWW-Authenticate challenge.
type Error struct {
	Code        string // invalid_token, insufficient_scope, invalid_request
	Description string
	// Unavailable: the token could not be checked (the authorization
	// server did not answer); the request gets 503, not 401.
	Unavailable bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func invalid(format string, args ...any) *Error {
	return &Error{Code: "invalid_token", Description: fmt.Sprintf(format, args...)}
}

// Issuer is one authorization server whose tokens are accepted.
type Issuer struct {
	Issuer           string
	JWKSURL          string   // "" means the jwks_uri of its metadata
	Audiences        []string // accepted besides the resource
	IntrospectionURL string
	ClientID         string
	ClientSecret     string
}

// Options configure a Verifier.
type Options struct {
	// Resource is the gateway's resource identifier, which a token's aud
	// must name.
	Resource string
	Issuers  []Issuer
	// Scopes are required of every request.
	Scopes []string
	// ScopesSupported are advertised in the metadata besides Scopes.
	ScopesSupported []string
	// HTTPClient fetches keys and metadata and introspects tokens; nil
	// means a client with a 10 s timeout.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verifier checks access tokens. Its methods are safe for concurrent use.
type Verifier struct {
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	issuers map[string]*keySource // by issuer identifier
	cache   tokenCache
}

// Leeway is how far a token's exp and nbf may be off the gateway's clock.
const Leeway = 30 * time.Second

// New returns a Verifier. It does no I/O: keys are fetched when first
// needed.
func New(opts Options) *Verifier {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	v := &Verifier{opts: opts, log: opts.Logger, now: opts.Now, issuers: make(map[string]*keySource)}
	for i := range opts.Issuers {
		is := &opts.Issuers[i]
		v.issuers[is.Issuer] = &keySource{issuer: is, client: opts.HTTPClient, log: opts.Logger}
	}
	v.cache.entries = make(map[[32]byte]cacheEntry)
	return v
}

// Verify checks an access token and returns its principal. A token is
// checked once: its principal is kept (until it expires, at most
// maxCacheAge) and returned again for the same token; a refused token is
// remembered for refusedCacheAge.
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	now := v.now()
	sum := sha256.Sum256([]byte(token))
	if p, err, ok := v.cache.get(sum, now); ok {
		return p, err
	}
	p, err := v.verify(ctx, token, now)
	var e *Error
	switch {
	case err == nil:
		p.bearer = token
		until := now.Add(maxCacheAge)
		if !p.Expires.IsZero() && p.Expires.Add(Leeway).Before(until) {
			until = p.Expires.Add(Leeway)
		}
		v.cache.put(sum, cacheEntry{p: p, until: until}, now)
	case errors.As(err, &e) && !e.Unavailable:
		v.cache.put(sum, cacheEntry{err: err, until: now.Add(refusedCacheAge)}, now)
	}
	return p, err
}

func (v *Verifier) verify(ctx context.Context, token string, now time.Time) (*Principal, error) {
	if looksLikeJWT(token) {
		return v.verifyJWT(ctx, token, now)
	}
	if v.introspects() {
		return v.introspect(ctx, token, now)
	}
	return nil, invalid("the token is not a JWT, and no issuer has an introspection_url for opaque tokens")
}

// audienceOK reports whether a token's audience names the gateway, for
// the issuer is.
func (v *Verifier) audienceOK(is *Issuer, aud []string) bool {
	for _, a := range aud {
		if a == v.opts.Resource || slices.Contains(is.Audiences, a) {
			return true
		}
	}
	return false
}

// principal makes the principal of a checked token from its claims.
func principal(is *Issuer, claims map[string]any, exp time.Time) (*Principal, error) {
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return nil, invalid("the token has no subject (sub)")
	}
	clientID, _ := claims["client_id"].(string)
	if clientID == "" {
		clientID, _ = claims["azp"].(string)
	}
	scopes := strings.Fields(stringOf(claims["scope"]))
	if len(scopes) == 0 {
		scopes = strings.Fields(stringsOf(claims["scp"]))
	}
	groups := []string{}
	switch g := claims["groups"].(type) {
	case string:
		groups = append(groups, g)
	case []any:
		for _, x := range g {
			if s, ok := x.(string); ok {
				groups = append(groups, s)
			}
		}
	}
	return &Principal{
		Key: sub + "@" + is.Issuer,
		Identity: policy.Identity{
			Auth:     "oauth",
			Subject:  sub,
			Issuer:   is.Issuer,
			ClientID: clientID,
			Scopes:   scopes,
			Groups:   groups,
			Claims:   claims,
		},
		Expires: exp,
	}, nil
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// stringsOf joins a claim that is a string or a list of strings with
// spaces.
func stringsOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var b strings.Builder
		for _, e := range x {
			if s, ok := e.(string); ok {
				b.WriteString(s)
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	return ""
}

// How long checked tokens are remembered, and how many.
const (
	maxCacheAge     = 5 * time.Minute
	refusedCacheAge = 5 * time.Second
	maxCached       = 10_000
)

// tokenCache remembers checked tokens by their SHA-256.
type tokenCache struct {
	mu      sync.Mutex
	entries map[[32]byte]cacheEntry
}

type cacheEntry struct {
	p     *Principal
	err   error
	until time.Time
}

func (c *tokenCache) get(sum [32]byte, now time.Time) (*Principal, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[sum]
	if !ok || now.After(e.until) {
		return nil, nil, false
	}
	return e.p, e.err, true
}

// put remembers an entry; a full cache drops what expired, then entries at
// random until a quarter is free.
func (c *tokenCache) put(sum [32]byte, e cacheEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCached {
		for k, x := range c.entries {
			if now.After(x.until) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < maxCached*3/4 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[sum] = e
}
