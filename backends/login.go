package backends

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/oauth"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// loginLimit bounds a login: time for the user to sign in in the browser.
const loginLimit = 10 * time.Minute

// Login signs in to the remote server s with opts.Authorize and stores the
// sign-in in opts.TokenDir, where running gateways pick it up. It connects
// as a backend would (the same transport, handshake and OAuth client) and
// returns when the session is ready. It reports whether the server asked
// for a sign-in at all. opts.Servers is ignored.
func Login(ctx context.Context, s config.Server, opts Options) (signedIn bool, err error) {
	if s.URL == "" {
		return false, errors.New("not a remote server (it has no url)")
	}
	if m := s.UpstreamAuth.Mode; m != "" {
		// Its sessions are each caller's own (upstream.go): there is no
		// shared sign-in to make.
		return false, fmt.Errorf("it is reached with each caller's own credential (upstream_auth mode %s), not with a sign-in of its own", m)
	}
	if opts.Authorize == nil || opts.TokenDir == "" {
		return false, errors.New("login needs Authorize and TokenDir")
	}
	s.Enabled, s.Restart = true, "never"
	opts.Servers = []config.Server{s}
	opts.StartupTimeout, opts.StartLimit = loginLimit, loginLimit
	m := New(opts)
	before := oauth.StampOf(opts.TokenDir, s.Name)
	m.Start(ctx)
	defer m.Close()
	m.WaitServer(ctx, s.Name)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	st := m.Status()[0]
	if st.State != Ready {
		return false, errors.New(st.Error)
	}
	return oauth.StampOf(opts.TokenDir, s.Name) != before, nil
}
