package backends

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/oauth"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// UserLogins are the sign-ins of upstream_auth: {mode: per_user_login}
// (docs/teams.md): each caller of the gateway signs in to such a server
// once, in a browser, through the gateway's pages under /upstream/, and its
// calls to the server then carry its own token, never another's.
//
// A caller is a principal key (SUBJECT@ISSUER). The pages are the
// command's (cmd/mcp-gateway/upstream_login.go); this is what they and the
// per-caller connections ask.
type UserLogins struct {
	u    *oauth.Users
	base string // the gateway's public origin, without a trailing slash
	// server returns the per_user_login server of a name, as configured now.
	server func(name string) (config.Server, bool)
}

// UserLoginOptions configure UserLogins.
type UserLoginOptions struct {
	// TokenDir is where sign-ins are kept (as for login).
	TokenDir string
	// Base is the gateway's public origin (https://gw.example): links and the
	// OAuth redirect URI (BASE/upstream/callback) are made from it.
	Base string
	// StateKey seals links and flows (gateway.http.state_key_env); nil: a
	// key of this process's own.
	StateKey []byte
	// Server returns the per_user_login server of a name, as configured now.
	Server func(name string) (config.Server, bool)
	Logger *slog.Logger
}

// UserLoginCallback is the path of the gateway's OAuth redirect URI.
const UserLoginCallback = "/upstream/callback"

// UserLoginPath is the path of a server's sign-in link (GET, the
// confirmation page; POST, the start of the flow).
func UserLoginPath(server string) string { return "/upstream/login/" + url.PathEscape(server) }

// NewUserLogins returns the per-caller sign-ins.
func NewUserLogins(o UserLoginOptions) *UserLogins {
	base := strings.TrimSuffix(o.Base, "/")
	return &UserLogins{base: base, server: o.Server, u: oauth.NewUsers(oauth.UsersOptions{
		TokenDir: o.TokenDir, Callback: base + UserLoginCallback, Key: o.StateKey, Logger: o.Logger,
	})}
}

// Link returns the sign-in link of caller to server.
func (l *UserLogins) Link(server, caller string) string {
	return l.base + UserLoginPath(server) + "?" + url.Values{"state": {l.u.Link(server, caller)}}.Encode()
}

// SignedIn reports whether caller has a sign-in to s.
func (l *UserLogins) SignedIn(s config.Server, caller string) bool { return l.u.SignedIn(s, caller) }

// OpenLink returns the caller a link's state names for server.
func (l *UserLogins) OpenLink(server, state string) (string, error) {
	return l.u.OpenLink(server, state)
}

// Begin starts caller's sign-in to server and returns the authorization URL
// to send the browser to; browser is the nonce the browser keeps.
func (l *UserLogins) Begin(ctx context.Context, server, caller, browser string) (string, error) {
	s, ok := l.server(server)
	if !ok {
		return "", errors.New(server + " is not a per_user_login server")
	}
	return l.u.Begin(ctx, s, caller, browser)
}

// Complete ends a sign-in at the callback; it returns the server and the
// caller signed in.
func (l *UserLogins) Complete(ctx context.Context, state, code, iss, browser string) (server, caller string, err error) {
	return l.u.Complete(ctx, l.server, state, code, iss, browser)
}

// Logout forgets caller's sign-in to server and revokes its tokens at the
// upstream if it offers revocation; it reports whether there was one.
func (l *UserLogins) Logout(ctx context.Context, server, caller string) (bool, error) {
	return l.u.Logout(ctx, server, caller)
}

// UserLogouts is Logout for an administrator, who names a person by their
// principal key or by their subject alone (every issuer's): it returns the
// callers signed out.
func UserLogouts(ctx context.Context, tokenDir, server, who string) ([]string, error) {
	u := oauth.NewUsers(oauth.UsersOptions{TokenDir: tokenDir})
	callers, err := u.Callers(server, who)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, c := range callers {
		if _, err := u.Logout(ctx, server, c); err != nil {
			errs = append(errs, err)
		}
	}
	return callers, errors.Join(errs...)
}
