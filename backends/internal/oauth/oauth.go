// Package oauth is a remote backend's OAuth 2.1 client, built on go-sdk's
// auth package: the sign-in `mcp-gateway login` stores (one file per
// server), refreshed as needed, step-up on insufficient_scope, and the
// sign-in itself when a login flow is given. backends' remote transports
// ask it for each request's Authorization header.
package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// LoginError is why a call to a remote server that needs sign-in fails:
// the gateway cannot ask the user from inside a session, `mcp-gateway
// login NAME` does.
//
// Its message is the reason of the NeedsLogin state; ServerError puts the
// server's name before it.
type LoginError struct {
	Server string
	// Scopes are the scopes the server asked for that the sign-in lacks
	// (a 403 insufficient_scope); login asks for them.
	Scopes []string
}

func (e *LoginError) Error() string {
	if len(e.Scopes) > 0 {
		return "needs sign-in with scope " + strings.Join(e.Scopes, " ") + ": run `mcp-gateway login " + e.Server + "`"
	}
	return "needs sign-in: run `mcp-gateway login " + e.Server + "`"
}

// Client is a remote server's OAuth 2.1 client (the authorizer of
// remote.go), built on go-sdk's auth package. It lives as long as the
// backend, across sessions.
//
// In a running gateway it only uses the sign-in `mcp-gateway login` stored
// (tokenstore.go), refreshing it as needed; a server that refuses it marks
// the backend as needing login. With Options.Authorize (login, the
// conformance client) it signs in itself with go-sdk's authorization code
// handler: discovery, client ID metadata document, pre-registered or
// dynamically registered client, PKCE, scopes from WWW-Authenticate,
// step-up; the result is stored.
type Client struct {
	server, url string
	store       tokenStore
	handler     *auth.AuthorizationCodeHandler // nil in a running gateway
	log         *slog.Logger
	// refreshes is the context of token refreshes, which outlive any one
	// request: its HTTP client gives up after the server's call timeout,
	// so that a token endpoint that hangs fails the calls waiting for it
	// instead of holding them, and the token source's lock, for ever.
	refreshes context.Context

	mu        sync.Mutex
	ts        oauth2.TokenSource // nil: not signed in
	stamp     Stamp              // the store's version ts comes from
	needLogin *LoginError        // set when the server refused the sign-in
}

// Options configure a Client.
type Options struct {
	// TokenDir is where sign-ins are kept, one file per server (TokenPath).
	TokenDir string
	// Timeout bounds a token refresh (the server's call timeout).
	Timeout time.Duration
	// Authorize, when set, lets the client sign in itself: the user is
	// sent to the authorization URL and redirected to RedirectURL.
	Authorize   auth.AuthorizationCodeFetcher
	RedirectURL string
}

// New returns the OAuth client of a url: server, or nil when the
// server's requests carry their own Authorization header or no token
// directory is configured.
func New(s config.Server, o Options, log *slog.Logger) *Client {
	if s.URL == "" || o.TokenDir == "" {
		return nil
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil
		}
	}
	hc := &http.Client{Timeout: o.Timeout}
	a := &Client{
		server: s.Name, url: s.URL, store: tokenStore{TokenPath(o.TokenDir, s.Name)}, log: log,
		refreshes: context.WithValue(context.Background(), oauth2.HTTPClient, hc),
	}
	if o.Authorize == nil {
		return a
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              o.RedirectURL,
		AuthorizationCodeFetcher: o.Authorize,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{o.RedirectURL},
				ClientName:   "mcp-gateway",
			},
		},
		RequestRefreshToken: true,
		NewTokenSource:      a.signedIn,
	}
	if u := s.OAuth.ClientMetadataURL; u != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: u}
	}
	if id := s.OAuth.ClientID; id != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: id}
		if sec := s.OAuth.ClientSecret; sec != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: sec}
		}
	}
	// The scopes of the stored sign-in include those a running gateway
	// was refused for since (step-up): a new login asks for them all.
	var stored []string
	if si, err := a.store.load(); err == nil && si != nil && si.URL == s.URL {
		stored = si.Scopes
	}
	cfg.ScopeFilter = func(found []string) []string {
		if len(found) == 0 {
			found = s.OAuth.Scopes
		}
		return unionScopes(found, stored)
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		log.Warn("OAuth sign-in is not possible", "server", s.Name, "err", err)
		return a
	}
	a.handler = h
	return a
}

// signedIn stores a new sign-in (go-sdk's handler calls it after the code
// exchange) and returns its token source.
func (a *Client) signedIn(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	si := &signIn{
		URL: a.url, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle,
		Scopes: cfg.Scopes, Token: tok,
	}
	if err := a.store.save(si); err != nil {
		return nil, err
	}
	a.log.Info("signed in to remote server", "server", a.server, "tokens", a.store.path)
	ts := &savingSource{a: a, si: si, base: cfg.TokenSource(ctx, tok), last: tok.AccessToken}
	a.mu.Lock()
	a.ts, a.stamp = ts, a.store.stamp()
	a.mu.Unlock()
	return ts, nil
}

// source returns the token source, after reading the store again if it
// changed (a login, a logout, a refresh by another gateway).
func (a *Client) source() oauth2.TokenSource {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.handler != nil {
		return a.ts // signing in itself: the store is only written
	}
	st := a.store.stamp()
	if st == a.stamp && a.ts != nil {
		return a.ts
	}
	a.stamp, a.ts = st, nil
	si, err := a.store.load()
	switch {
	case err != nil:
		a.log.Warn("cannot read the stored sign-in", "server", a.server, "err", err)
	case si == nil || si.Token == nil:
	case si.URL != a.url:
		a.log.Warn("the stored sign-in is for another URL; run mcp-gateway login again", "server", a.server)
	default:
		a.ts = &savingSource{a: a, si: si, base: si.config().TokenSource(a.refreshes, si.Token), last: si.Token.AccessToken}
	}
	return a.ts
}

// Header is the Authorization header of a request: the current access
// token, refreshed if it expired; "" when not signed in (the server then
// refuses, and refused decides).
func (a *Client) Header(context.Context) (string, error) {
	ts := a.source()
	if ts == nil {
		return "", nil
	}
	tok, err := ts.Token()
	if err != nil {
		var ne net.Error
		var re *oauth2.RetrieveError
		if errors.As(err, &ne) || errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 500 {
			a.log.Warn("refreshing the token got no answer; the request fails, the sign-in stands", "server", a.server, "err", err)
			return "", &RefreshError{err}
		}
		a.log.Debug("no usable token", "server", a.server, "err", err)
		return "", nil // the server's 401 decides (refused)
	}
	return tok.Type() + " " + tok.AccessToken, nil
}

// RefreshError is a token refresh that failed for want of an answer (a
// timeout, a network error, the authorization server's 5xx), not because
// the grant was refused: the request it was for fails, and the sign-in
// stands for the next one.
type RefreshError struct{ err error }

func (e *RefreshError) Error() string { return "refreshing the OAuth token failed: " + e.err.Error() }
func (e *RefreshError) Unwrap() error { return e.err }

// Refused handles a 401 or 403: with a handler it signs in (or steps up
// the scopes); a running gateway retries once if a new sign-in was stored
// meanwhile, and otherwise reports that a login is needed.
func (a *Client) Refused(ctx context.Context, req *http.Request, resp *http.Response) error {
	if a.handler != nil {
		return a.handler.Authorize(ctx, req, resp)
	}
	stepUp, insufficient := insufficientScope(resp)
	if resp.StatusCode == http.StatusForbidden && !insufficient {
		return nil // not a sign-in matter: the retry gets its 403
	}
	a.mu.Lock()
	if st := a.store.stamp(); st != a.stamp {
		a.mu.Unlock()
		return nil // signed in since: source reads it for the retry
	}
	ss, _ := a.ts.(*savingSource)
	a.mu.Unlock()
	le := &LoginError{Server: a.server}
	if insufficient {
		// A new token of the same grant has the same scopes: only a
		// login asking for more helps. The scopes are stored for it.
		if ss != nil {
			le.Scopes = ss.addScopes(stepUp)
		}
	} else {
		// A token the server dropped before its time (revoked, or a
		// server that restarted) may be refreshed, once per token.
		sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if ss != nil && sent != "" && ss.refreshFrom(sent) {
			return nil
		}
	}
	a.mu.Lock()
	a.needLogin = le
	a.mu.Unlock()
	return le
}

// insufficientScope reports whether resp refuses the token for lacking a
// scope (a Bearer challenge with error="insufficient_scope"), and the
// scopes the server names for the request.
func insufficientScope(resp *http.Response) (scopes []string, ok bool) {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, false
	}
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["error"] == "insufficient_scope" {
			return strings.Fields(c.Params["scope"]), true
		}
	}
	return nil, false
}

// unionScopes returns a's scopes followed by those of b not in a.
func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// LoginNeeded returns why the server refused the stored sign-in (or there
// was none), or nil, and clears the mark. a may be nil (no OAuth).
func (a *Client) LoginNeeded() *LoginError {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := a.needLogin
	a.needLogin = nil
	return n
}

// RefusedLogin is LoginNeeded without clearing the mark.
func (a *Client) RefusedLogin() *LoginError {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.needLogin
}

// WaitLogin waits until the stored sign-in changes (a login) or ctx ends;
// it reports whether it changed.
func (a *Client) WaitLogin(ctx context.Context, every time.Duration) bool {
	a.mu.Lock()
	from := a.stamp
	a.mu.Unlock()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if a.store.stamp() != from {
				return true
			}
		}
	}
}

// savingSource writes each refreshed token back to the store, so that the
// next gateway (or this one after a restart) starts from it.
type savingSource struct {
	a *Client

	mu     sync.Mutex
	base   oauth2.TokenSource
	si     *signIn
	last   string
	forced string // the access token refreshFrom replaced
}

// refreshFrom refreshes the token now, because the server refused sent;
// it reports whether a new token came. It refreshes from a given token
// only once, so a server that refuses every token ends in needs_login, not
// a loop.
func (s *savingSource) refreshFrom(sent string) bool {
	s.mu.Lock()
	if s.si.Token.RefreshToken == "" || s.forced == sent {
		s.mu.Unlock()
		return false
	}
	s.forced = sent
	expired := *s.si.Token
	expired.Expiry = time.Now().Add(-time.Hour)
	s.base = s.si.config().TokenSource(s.a.refreshes, &expired)
	s.mu.Unlock()
	tok, err := s.Token()
	return err == nil && tok.AccessToken != sent
}

// addScopes adds the scopes a server asked for (step-up) to the stored
// sign-in, for the next login to ask for; it returns those the sign-in
// lacked (all of them, when the server's list holds nothing new).
func (s *savingSource) addScopes(scopes []string) (missing []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range scopes {
		if !slices.Contains(s.si.Scopes, sc) {
			missing = append(missing, sc)
		}
	}
	if len(missing) == 0 {
		return scopes
	}
	si := *s.si
	si.Scopes = unionScopes(si.Scopes, missing)
	s.si = &si
	s.save()
	return missing
}

// save writes s.si to the store, the version the backend now comes from
// (so that its own write is not taken for a login); s.mu is held.
func (s *savingSource) save() {
	if err := s.a.store.save(s.si); err != nil {
		s.a.log.Warn("cannot store the sign-in", "server", s.a.server, "err", err)
		return
	}
	s.a.mu.Lock()
	s.a.stamp = s.a.store.stamp()
	s.a.mu.Unlock()
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	tok, err := base.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			s.a.log.Warn("refreshing the token failed", "server", s.a.server, "error_code", re.ErrorCode)
		}
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		si := *s.si
		si.Token = tok
		s.si = &si
		s.save()
	}
	return tok, nil
}
