// Package testop is a real OpenID provider for the tests of the gateway's
// OAuth resource server: the example OP that github.com/zitadel/oidc ships
// (its op package, login page and in-memory storage), started on a
// loopback port, with what an MCP authorization server does beyond it —
// the audience of an access token is the resource the client named
// (RFC 8707's resource parameter), access tokens are JWTs carrying the
// granted scopes and the user's groups, any scope may be asked for — and
// a scope, test:expired, that makes it issue a token that has already
// expired. It is a package of the module (not a _test file) so that the
// end-to-end tests can start it in their own process and a node script
// can sign in against it.
package testop

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// The clients the OP knows.
const (
	// ClientID is a public client (PKCE) that gets JWT access tokens.
	ClientID = "mcp-client"
	// OpaqueClientID is a public client that gets opaque access tokens.
	OpaqueClientID = "mcp-opaque"
	// GatewayClientID (with GatewaySecret) introspects opaque tokens.
	GatewayClientID = "mcp-gateway"
	GatewaySecret   = "gateway-secret"
	// ExpiredScope asks for an access token that expired ten minutes ago.
	ExpiredScope = "test:expired"
	// ExchangeClientID (with ExchangeSecret, client_secret_basic) may
	// exchange a user's access token for one meant for another audience
	// (RFC 8693, the op package's token exchange), on the user's behalf:
	// the issued JWT's subject is the user's, its aud the audience asked
	// for.
	ExchangeClientID = "mcp-exchanger"
	ExchangeSecret   = "exchanger-secret"
)

// User is a user who can sign in.
type User struct {
	ID, Username, Password string
	Groups                 []string
}

// OP is a running provider.
type OP struct {
	// Issuer is its issuer identifier: http://127.0.0.1:PORT/.
	Issuer string
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}
	store  *store
}

// Exchanges is the number of token exchanges the OP granted.
func (o *OP) Exchanges() int {
	o.store.mu.Lock()
	defer o.store.mu.Unlock()
	return o.store.exchanges
}

// Start starts a provider on a free loopback port with these users.
// Redirects to any loopback address are accepted (RFC 8252).
func Start(users ...User) (*OP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	issuer := "http://" + ln.Addr().String() + "/"
	clients := map[string]*storage.Client{}
	for _, c := range []*storage.Client{
		storage.NativeClient(ClientID, "http://127.0.0.1/callback", "http://localhost/callback"),
		storage.NativeClient(OpaqueClientID, "http://127.0.0.1/callback", "http://localhost/callback"),
		storage.WebClient(GatewayClientID, GatewaySecret, "http://127.0.0.1/unused"),
		storage.WebClient(ExchangeClientID, ExchangeSecret, "http://127.0.0.1/unused"),
	} {
		clients[c.GetID()] = c
	}
	s := &store{
		Storage:   storage.NewStorageWithClients(userStore(users), clients),
		users:     users,
		resources: map[string][]string{},
	}
	router := exampleop.SetupServer(issuer, s, nil, false)
	o := &OP{Issuer: issuer, ln: ln, done: make(chan struct{}), store: s,
		srv: &http.Server{Handler: withResource(router), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(o.done)
		_ = o.srv.Serve(ln)
	}()
	return o, nil
}

// Close stops the provider.
func (o *OP) Close() {
	_ = o.srv.Close()
	<-o.done
}

// Token signs a user in as a client of the OP and returns the access
// token, as a client would: the authorization code flow with PKCE through
// the OP's login page, for the resource and scopes given.
func (o *OP) Token(ctx context.Context, client, username, password, resource string, scopes ...string) (string, error) {
	redirect := "http://127.0.0.1:1/callback"
	verifier := rand.Text() + rand.Text()
	q := url.Values{
		"client_id": {client}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"s"},
		"scope": {strings.Join(scopes, " ")}, "code_challenge": {oidc.NewSHACodeChallenge(verifier)},
		"code_challenge_method": {"S256"},
	}
	if resource != "" {
		q.Set("resource", resource)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	loc, err := o.step(ctx, hc, http.MethodGet, o.Issuer+"auth?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	id := loc.Query().Get("authRequestID")
	if id == "" {
		return "", fmt.Errorf("the OP did not send to its login page: %s", loc)
	}
	loc, err = o.step(ctx, hc, http.MethodPost, o.Issuer+"login/username", url.Values{"id": {id}, "username": {username}, "password": {password}})
	if err != nil {
		return "", err
	}
	for loc.Query().Get("code") == "" {
		if loc, err = o.step(ctx, hc, http.MethodGet, o.resolve(loc), nil); err != nil {
			return "", err
		}
		if e := loc.Query().Get("error"); e != "" {
			return "", fmt.Errorf("the OP refused: %s: %s", e, loc.Query().Get("error_description"))
		}
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect},
		"client_id": {client}, "code_verifier": {verifier}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.Issuer+"oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok oidc.AccessTokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		return "", fmt.Errorf("token endpoint (%s): %w", resp.Status, err)
	}
	if tok.AccessToken == "" {
		return "", errors.New("token endpoint: no access token")
	}
	return tok.AccessToken, nil
}

// step makes one request of the sign-in and returns where it redirects.
func (o *OP) step(ctx context.Context, hc *http.Client, method, u string, form url.Values) (*url.URL, error) {
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("%s %s: %s, not a redirect", method, u, resp.Status)
	}
	return resp.Location()
}

func (o *OP) resolve(u *url.URL) string {
	base, _ := url.Parse(o.Issuer)
	return base.ResolveReference(u).String()
}

// resourceKey carries an authorization request's resource parameters in
// its context, from withResource to store.CreateAuthRequest.
type resourceKey struct{}

// withResource reads the resource parameters of an authorization request,
// which the OP's own parsing drops.
func withResource(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/auth" {
			if res := r.URL.Query()["resource"]; len(res) > 0 {
				r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, res))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// store is the example's storage with the audience, scopes and groups of
// an MCP authorization server.
type store struct {
	*storage.Storage
	users []User

	mu        sync.Mutex
	resources map[string][]string // authorization request id → its resources
	exchanges int                 // token exchanges granted
}

// ValidateTokenExchangeRequest grants ExchangeClientID an access token on
// the subject's behalf (the example's storage allows only its admins to
// impersonate); any other client is refused.
func (s *store) ValidateTokenExchangeRequest(ctx context.Context, req op.TokenExchangeRequest) error {
	if req.GetClientID() != ExchangeClientID {
		return oidc.ErrUnauthorizedClient().WithDescription("this client may not exchange tokens")
	}
	if t := req.GetRequestedTokenType(); t == "" {
		req.SetRequestedTokenType(oidc.AccessTokenType)
	} else if t != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	if len(req.GetAudience()) == 0 {
		return oidc.ErrInvalidTarget().WithDescription("an audience is required")
	}
	req.SetCurrentScopes(req.GetScopes())
	s.mu.Lock()
	s.exchanges++
	s.mu.Unlock()
	return nil
}

func (s *store) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	ar, err := s.Storage.CreateAuthRequest(ctx, req, userID)
	if err != nil {
		return nil, err
	}
	if res, ok := ctx.Value(resourceKey{}).([]string); ok {
		s.mu.Lock()
		s.resources[ar.GetID()] = res
		s.mu.Unlock()
	}
	return s.wrap(ar), nil
}

func (s *store) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	ar, err := s.Storage.AuthRequestByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.wrap(ar), nil
}

func (s *store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	ar, err := s.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	return s.wrap(ar), nil
}

// wrap gives an authorization request the audience of its resources, and
// the introspecting client's, which the example's introspection requires.
func (s *store) wrap(ar op.AuthRequest) op.AuthRequest {
	s.mu.Lock()
	res := s.resources[ar.GetID()]
	s.mu.Unlock()
	if len(res) == 0 {
		return ar
	}
	return audienced{ar, append(slices.Clone(res), GatewayClientID)}
}

type audienced struct {
	op.AuthRequest
	aud []string
}

func (a audienced) GetAudience() []string { return a.aud }

// CreateAccessToken and CreateAccessAndRefreshTokens issue an expired
// token for ExpiredScope. The request keeps its audience: the example's
// storage records the token's audience from it.
func (s *store) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	return id, expiry(req, exp), err
}

func (s *store) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, req, current)
	return id, refresh, expiry(req, exp), err
}

func expiry(req op.TokenRequest, exp time.Time) time.Time {
	if slices.Contains(req.GetScopes(), ExpiredScope) {
		return time.Now().Add(-10 * time.Minute)
	}
	return exp
}

// GetPrivateClaimsFromScopes puts the granted scopes and the user's groups
// in a JWT access token.
func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	claims, err := s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
	if err != nil {
		return nil, err
	}
	if claims == nil {
		claims = map[string]any{}
	}
	claims["scope"] = strings.Join(scopes, " ")
	for _, u := range s.users {
		if u.ID == userID {
			claims["groups"] = u.Groups
		}
	}
	return claims, nil
}

// GetClientByClientID gives ClientID JWT access tokens, and lets every
// client ask for any scope.
func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{c, id == ClientID || id == ExchangeClientID}, nil
}

type client struct {
	op.Client
	jwt bool
}

func (c client) AccessTokenType() op.AccessTokenType {
	if c.jwt {
		return op.AccessTokenTypeJWT
	}
	return op.AccessTokenTypeBearer
}

func (c client) IsScopeAllowed(string) bool { return true }

// userStore is the users who can sign in.
type userStore []User

func (u userStore) GetUserByID(id string) *storage.User {
	for _, x := range u {
		if x.ID == id {
			return x.user()
		}
	}
	return nil
}

func (u userStore) GetUserByUsername(name string) *storage.User {
	for _, x := range u {
		if x.Username == name {
			return x.user()
		}
	}
	return nil
}

func (userStore) ExampleClientID() string { return "service" }

func (x User) user() *storage.User {
	return &storage.User{ID: x.ID, Username: x.Username, Password: x.Password, FirstName: x.Username, LastName: "Test",
		Email: x.Username + "@example.com", EmailVerified: true, PreferredLanguage: language.English}
}
