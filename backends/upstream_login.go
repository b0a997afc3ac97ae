package backends

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/oauth"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// perUserLogin is the per_user_login Source of server s: each person's
// own sign-in to the server, through the gateway (userlogin.go), kept per
// subject (Caller.Subject). Without the sign-ins (a gateway whose callers
// are not authenticated by OAuth, which config warns of) every caller is
// told to sign in, with nowhere to do it.
func (m *Manager) perUserLogin(s config.Server) (Source, error) {
	if m.opts.UserLogins == nil {
		return notSignedIn{s.Name}, nil
	}
	return userSource{s, m.opts.UserLogins}, nil
}

type notSignedIn struct{ server string }

func (n notSignedIn) Token(_ context.Context, c *Caller) (Token, error) {
	return Token{}, &SignInError{Server: n.server, Subject: c.Subject}
}

// userSource is per_user_login's Source: the caller's own sign-in to the
// server, refreshed before it expires (one refresh per caller and server at
// a time); a caller without a usable one gets *SignInError with their link.
type userSource struct {
	s config.Server
	l *UserLogins
}

func (u userSource) Token(ctx context.Context, c *Caller) (Token, error) {
	tok, exp, err := u.l.u.Token(ctx, u.s, c.Subject)
	if errors.Is(err, oauth.ErrNotSignedIn) {
		return Token{}, &SignInError{Server: u.s.Name, Subject: c.Subject, URL: u.l.Link(u.s.Name, c.Subject)}
	}
	if err != nil {
		return Token{}, fmt.Errorf("the caller's sign-in to %s: %w", u.s.Name, err)
	}
	return Token{Value: tok, Expiry: exp}, nil
}

// PerUserServers are the servers of upstream_auth: {mode: per_user_login},
// as configured now.
func (m *Manager) PerUserServers() []config.Server {
	var out []config.Server
	for _, b := range m.backends() {
		if b.cfg.UpstreamAuth.Mode == config.UpstreamPerUserLogin && b.cfg.URL != "" {
			out = append(out, b.cfg)
		}
	}
	return out
}

// PerUserServer is the per_user_login server of a name, as configured now.
func (m *Manager) PerUserServer(name string) (config.Server, bool) {
	b := m.set.Load().byName[name]
	if b == nil || b.cfg.UpstreamAuth.Mode != config.UpstreamPerUserLogin || b.cfg.URL == "" {
		return config.Server{}, false
	}
	return b.cfg, true
}

// EndCallerSession closes caller's session of a per-caller server, if it
// has one: after a sign-out, nothing of the sign-in stays in use.
func (m *Manager) EndCallerSession(server, caller string) {
	b := m.set.Load().byName[server]
	if b == nil || b.pool == nil {
		return
	}
	b.pool.mu.Lock()
	defer b.pool.mu.Unlock()
	if e := b.pool.byKey[caller]; e != nil {
		b.pool.removeLocked(e)
	}
}

// OpenCallerSession opens caller's session of per_user_login server after they
// signed in, waiting within for it to be ready and its lists shown: the
// server's tools appear to clients (list_changed) when it is the first
// session, and the caller's next call goes straight through. A failure is
// the next request's to report.
func (m *Manager) OpenCallerSession(ctx context.Context, server, caller string, within time.Duration) {
	b := m.set.Load().byName[server]
	if b == nil || b.pool == nil {
		return
	}
	cb, _, err := b.awaitSession(ctx, time.Now().Add(within), CallOptions{Caller: &Caller{Subject: caller}}, "initialize", "")
	if err == nil {
		// Published now, not after the session's ready state is seen:
		// the page that says "signed in" comes after the tools.
		b.publish(cb)
	}
}
