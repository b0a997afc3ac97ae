package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// login is `mcp-gateway login NAME`: sign in to a remote server in the
// browser. The authorization server redirects to a listener on a loopback
// port (the configured oauth.redirect_uri, or a free one), and the sign-in
// is stored where running gateways pick it up.
func (a *app) login(ctx context.Context) error {
	s, err := a.remoteServer()
	if err != nil {
		return err
	}
	l, redirect, callback, err := listenRedirect(s.OAuth.RedirectURI)
	if err != nil {
		return fmt.Errorf("login: listen for the redirect: %w", err)
	}
	results := make(chan *auth.AuthorizationResult, 1)
	// state is the state of the authorization request in flight: a
	// callback without it (another page or program reaching the loopback
	// port) is answered with an error page and ignored, so that it can
	// neither end the login nor stand in for the real callback.
	var state atomic.Pointer[string]
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callback {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if want := state.Load(); want == nil || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(*want)) != 1 {
			a.log.Warn("ignored a request to the sign-in redirect that does not belong to this sign-in (its state does not match)")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<p>This response does not belong to this sign-in to %s (its state does not match), so it was ignored. Sign in from the URL <code>mcp-gateway login</code> printed.</p>", html.EscapeString(s.Name))
			return
		}
		if e := q.Get("error"); e != "" {
			fmt.Fprintf(w, "<p>Sign-in to %s failed: %s. You can close this tab.</p>", html.EscapeString(s.Name), html.EscapeString(e))
		} else {
			fmt.Fprintf(w, "<p>Signed in to %s. You can close this tab.</p>", html.EscapeString(s.Name))
		}
		select {
		case results <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
		default:
		}
	})}
	go srv.Serve(l)
	defer srv.Close()

	fetch := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("authorization URL: %w", err)
		}
		st := u.Query().Get("state")
		if st == "" {
			return nil, errors.New("the authorization URL carries no state")
		}
		state.Store(&st)
		fmt.Fprintf(a.env.stderr, "Sign in to %s in your browser; if it does not open, open this URL:\n\n  %s\n\n", s.Name, args.URL)
		if err := openBrowser(args.URL); err != nil {
			a.log.Debug("no browser opened", "err", err)
		}
		select {
		case r := <-results:
			if r.Code == "" {
				return nil, errors.New("the authorization server sent no code")
			}
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	signedIn, err := backends.Login(ctx, s, backends.Options{
		Logger:      a.log.With("component", "backends"),
		ClientInfo:  &mcp.Implementation{Name: "mcp-gateway", Version: version()},
		TokenDir:    a.tokenDir,
		Authorize:   fetch,
		RedirectURL: redirect,
	})
	if err != nil {
		return fmt.Errorf("login %s: %w", s.Name, err)
	}
	if !signedIn {
		fmt.Fprintf(a.env.stdout, "%s did not ask for a sign-in; nothing stored.\n", s.Name)
		return nil
	}
	fmt.Fprintf(a.env.stdout, "Signed in to %s (stored in %s); running gateways use it now.\n", s.Name, backends.TokenPath(a.tokenDir, s.Name))
	return nil
}

// listenRedirect listens where the authorization server redirects to: the
// configured redirect URI (oauth.redirect_uri, which a pre-registered client
// must match exactly, so it is sent as written), or else a free port on
// 127.0.0.1. It returns the redirect URI and the path that receives it.
func listenRedirect(configured string) (l net.Listener, redirect, path string, err error) {
	if configured == "" {
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, "", "", err
		}
		return l, "http://" + l.Addr().String() + "/callback", "/callback", nil
	}
	u, err := url.Parse(configured) // validated by config: http, loopback, a port
	if err != nil {
		return nil, "", "", err
	}
	if l, err = net.Listen("tcp", u.Host); err != nil {
		return nil, "", "", fmt.Errorf("oauth.redirect_uri %s: %w", configured, err)
	}
	path = u.Path
	if path == "" {
		path = "/"
	}
	return l, configured, path, nil
}

// logout is `mcp-gateway logout NAME`: forget a remote server's sign-in;
// with --subject S, person S's sign-in to a per_user_login server.
func (a *app) logout(ctx context.Context) error {
	s, err := a.remoteServer()
	if err != nil {
		return err
	}
	if a.inv.subject != "" {
		return a.logoutSubject(ctx, s)
	}
	had, err := backends.Logout(a.tokenDir, s.Name)
	if err != nil {
		return fmt.Errorf("logout %s: %w", s.Name, err)
	}
	if had {
		fmt.Fprintf(a.env.stdout, "Signed out of %s.\n", s.Name)
	} else {
		fmt.Fprintf(a.env.stdout, "%s had no stored sign-in.\n", s.Name)
	}
	return nil
}

// remoteServer is the configured url: server login and logout name.
func (a *app) remoteServer() (config.Server, error) {
	for _, s := range a.cfg.Servers {
		if s.Name == a.inv.server {
			if s.URL == "" {
				return s, usagef("%s is a local server (command); only url: servers sign in", s.Name)
			}
			return s, nil
		}
	}
	return config.Server{}, usagef("no server %q in the configuration", a.inv.server)
}

// openBrowser opens url in the user's browser, where there is one.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it; its outcome does not matter
	return nil
}

// logoutSubject is `mcp-gateway logout NAME --subject S`: S's sign-in to
// the per_user_login server s deleted and its tokens revoked at the
// upstream (when it offers revocation). S is a caller's principal key
// (SUBJECT@ISSUER) or their subject alone, at any issuer.
func (a *app) logoutSubject(ctx context.Context, s config.Server) error {
	if s.UpstreamAuth.Mode != config.UpstreamPerUserLogin {
		return usagef("%s is not a per_user_login server (upstream_auth: {mode: per_user_login}): its sign-in is not per person; mcp-gateway logout %s forgets the shared one", s.Name, s.Name)
	}
	callers, err := backends.UserLogouts(ctx, a.tokenDir, s.Name, a.inv.subject)
	for _, c := range callers {
		fmt.Fprintf(a.env.stdout, "Signed %s out of %s.\n", c, s.Name)
	}
	if err != nil {
		return fmt.Errorf("logout %s --subject %s: %w", s.Name, a.inv.subject, err)
	}
	if len(callers) == 0 {
		fmt.Fprintf(a.env.stdout, "%s had no sign-in to %s.\n", a.inv.subject, s.Name)
	}
	return nil
}
