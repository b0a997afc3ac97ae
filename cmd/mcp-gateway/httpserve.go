package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// HTTP server limits (docs/http.md#security): slow clients cannot pin the
// server. There is no write timeout: SSE streams and long tool calls stay
// open as long as they run; idle keep-alive connections are closed.
const (
	httpReadHeaderTimeout = 10 * time.Second
	httpReadTimeout       = 60 * time.Second
	httpIdleTimeout       = 120 * time.Second
	httpMaxBody           = 4 << 20
	// shutdownGrace bounds how long in-flight requests may finish after
	// SIGINT or SIGTERM.
	shutdownGrace = 10 * time.Second
)

// serveHTTP is `--transport http`: MCP (Streamable HTTP at /mcp, SSE at
// /sse + /messages) and the REST API until a signal.
func (a *app) serveHTTP(ctx context.Context) error {
	hc := a.cfg.Gateway.HTTP
	g, err := a.newGuard()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", hc.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", hc.Listen, err)
	}
	maxConns, warn := connectionLimit(hc.MaxConnections, openFileLimit())
	if warn != "" {
		a.log.Warn(warn)
	}
	perSource := connectionsPerSource(hc.MaxConnectionsPerSource, maxConns)
	var lastRefusal atomic.Int64 // unix nanoseconds of the last warning
	limited := newLimitListener(ln, maxConns, perSource, func() {
		now := time.Now().UnixNano()
		if last := lastRefusal.Load(); now-last > int64(10*time.Second) && lastRefusal.CompareAndSwap(last, now) {
			a.log.Warn("http: refusing connections past the limit (503)", "max_connections", maxConns, "max_connections_per_source", perSource)
		}
	})
	ln = limited
	front := a.gw.NewHTTPFront(gateway.HTTPOptions{Sessionless: hc.Stateless, IdleTimeout: a.cfg.SessionIdleTimeout(),
		SessionBufferBytes: int64(hc.SessionBufferBytes), MaxSessions: hc.MaxSessions, MaxSessionsPerIdentity: hc.MaxSessionsPerIdentity,
		MaxStreams: hc.MaxStreams, Replica: replicaName(hc.Replica, ln.Addr())})
	metrics := a.metrics
	// MCP and REST (and the same per profile) are the front's; the rest
	// is the process's own.
	mux := http.NewServeMux()
	front.Other = mux
	if v := g.verifier; v != nil {
		// RFC 9728: at the well-known path with the resource's path after
		// it, and without, for clients that do not insert it.
		meta := func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "max-age=300")
			_, _ = w.Write(v.Metadata())
		}
		mux.HandleFunc("GET "+authn.WellKnown, meta)
		if p := authn.MetadataPath(v.Resource()); p != authn.WellKnown {
			mux.HandleFunc("GET "+p, meta)
		}
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	// /status and /metrics show a caller the servers its policy lets it
	// see, as its lists do: a hidden server's state, errors and stderr
	// are not its business.
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		servers := a.backends.Status()
		servers = slices.DeleteFunc(servers, func(s backends.Status) bool { return !a.gw.SeesServer(r.Context(), s.Name) })
		w.Header().Set("Content-Type", "application/json")
		_ = writeJSON(w, map[string]any{"servers": servers, "sessions": front.Sessions(), "streams": front.Streams(),
			"connections": limited.counts()})
	})
	mux.Handle("GET /metrics", metrics.handler(a.gw.SeesServer))
	// The trust layer's page, behind the front's authentication; with
	// OAuth, every caller is authenticated, and only gateway.policy.admin's
	// may review and approve.
	dash := a.newDashboard()
	if admin := a.admin; g.auth == "oauth" {
		dash.admit = func(r *http.Request) error {
			p := gateway.PrincipalOf(r.Context())
			switch {
			case admin == nil:
				return errors.New("with gateway.http.auth: oauth, the dashboard is for the callers gateway.policy.admin names, and it names none")
			case p == nil || !admin.Holds(p.Identity):
				return errors.New("the dashboard is for the callers gateway.policy.admin names")
			}
			return nil
		}
	}
	dash.routes(mux)
	if a.userLogins != nil {
		g.upstreamPages = true
		(&upstreamLogins{l: a.userLogins, secure: strings.HasPrefix(hc.OAuth.Resource, "https:"), a: a}).routes(mux)
	}
	busy := &inFlight{}
	srv := &http.Server{
		Handler:           g.wrap(busy.wrap(front)),
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		IdleTimeout:       httpIdleTimeout,
		// Which connections are idle, for the connection limits to close
		// first.
		ConnState: limited.connState,
		// Accept errors (out of descriptors: the server backs off 5 ms
		// doubling to 1 s) and the like, in the gateway's log.
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	a.backends.Start(ctx)
	stopReload := a.startReload(ctx) // live configuration, as on stdio
	defer stopReload()
	defer startRuntimeStats(a.log)()
	a.log.Info("mcp-gateway serving on http", "version", version(), "addr", ln.Addr().String(),
		"stateless", hc.Stateless, "auth", g.auth, "backends", len(a.cfg.Servers), "max_connections", maxConns, "max_connections_per_source", perSource)
	if r := front.Replica(); r != "" {
		a.log.Info("sessions sealed with the state key: any replica serves their POSTs (docs/deploy.md)", "replica", r)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		front.Close()
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("mcp-gateway shutting down", "reason", "signal", "in_flight", busy.n.Load())
	// Stop accepting; let the POSTs in flight (tool calls) finish within
	// the grace; then end the sessions and their open streams, which
	// never go idle by themselves. The backends stop after (app.close).
	shutdownDone := make(chan error, 1)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	go func() { shutdownDone <- srv.Shutdown(sctx) }()
	if !busy.wait(sctx) {
		a.log.Warn("requests still in flight after the shutdown grace are cut", "in_flight", busy.n.Load(), "grace", shutdownGrace)
	}
	front.Close()
	if err := <-shutdownDone; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		a.log.Warn("http shutdown", "err", err)
	}
	_ = srv.Close()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newGuard makes the HTTP front's guard from gateway.http: the token's or
// the OAuth issuers' secrets are read from the environment now; one that
// is not set is a configuration error, never an open server.
func (a *app) newGuard() (*guard, error) {
	hc := a.cfg.Gateway.HTTP
	g := &guard{origins: hc.AllowedOrigins, maxBody: httpMaxBody, loopback: isLoopbackAddr(hc.Listen), auth: hc.AuthMode()}
	rl := a.cfg.Gateway.RateLimits
	g.anonymous = len(a.cfg.Gateway.Policy.Rules) > 0 || rl.Identity.PerMinute > 0 || len(rl.Tools) > 0
	switch g.auth {
	case "token":
		// Trimmed as the presented token is: a secret read from a file
		// often ends in a newline.
		tok, _ := a.env.lookup(hc.AuthTokenEnv)
		if tok = strings.TrimSpace(tok); tok == "" {
			return nil, usagef("gateway.http.auth_token_env names %s, which is not set", hc.AuthTokenEnv)
		}
		g.token = []byte(tok)
		g.tokenP = authn.Token(g.token)
	case "oauth":
		o := hc.OAuth
		opts := authn.Options{Resource: o.Resource, Scopes: o.Scopes, Logger: a.log.With("component", "oauth")}
		for _, ts := range o.ToolScopes {
			opts.ScopesSupported = append(opts.ScopesSupported, ts.Scopes...)
		}
		for _, is := range o.Issuers {
			ai := authn.Issuer{Issuer: is.Issuer, JWKSURL: is.JWKSURL, Audiences: is.Audiences,
				IntrospectionURL: is.IntrospectionURL, ClientID: is.ClientID}
			if is.ClientSecretEnv != "" {
				secret, _ := a.env.lookup(is.ClientSecretEnv)
				if ai.ClientSecret = strings.TrimSpace(secret); ai.ClientSecret == "" {
					return nil, usagef("gateway.http.oauth.issuers: client_secret_env of %s names %s, which is not set", is.Issuer, is.ClientSecretEnv)
				}
			}
			opts.Issuers = append(opts.Issuers, ai)
		}
		g.verifier = authn.New(opts)
	default:
		if !g.loopback {
			a.log.Warn("listening beyond loopback without authentication (gateway.http.auth): anyone who reaches the address can call every tool", "listen", hc.Listen)
		}
	}
	return g, nil
}

// inFlight counts the requests being served, except event streams (GET),
// which last as long as their session.
type inFlight struct{ n atomic.Int64 }

func (f *inFlight) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			f.n.Add(1)
			defer f.n.Add(-1)
		}
		next.ServeHTTP(w, r)
	})
}

// wait waits until no request is in flight, or ctx is done (false).
func (f *inFlight) wait(ctx context.Context) bool {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for f.n.Load() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}

// replicaName is this process's name among the replicas
// (gateway.http.replica): configured, else the host name and the port the
// front listens on (addr), which tell apart the pods of a Deployment and
// the processes of one machine, and stay the same across a restart.
func replicaName(configured string, addr net.Addr) string {
	if configured != "" {
		return configured
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	if ta, ok := addr.(*net.TCPAddr); ok {
		host += "-" + strconv.Itoa(ta.Port)
	}
	return gateway.ReplicaName(host)
}
