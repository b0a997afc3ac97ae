package backends

import (
	"context"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// perUserLogin is the per_user_login Source of server s: each person's
// own sign-in to the server, through the gateway, kept per subject
// (Caller.Subject). Its Token returns the person's access token
// (refreshed as it nears expiry), or a *SignInError with the URL where
// the person signs in when there is none. Not built yet: every caller is
// told to sign in, with no URL.
func (m *Manager) perUserLogin(s config.Server) (Source, error) {
	return notSignedIn{s.Name}, nil
}

type notSignedIn struct{ server string }

func (n notSignedIn) Token(_ context.Context, c *Caller) (Token, error) {
	return Token{}, &SignInError{Server: n.server, Subject: c.Subject}
}
