package main

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway"
)

// guard applies the HTTP front's security rules to every request, MCP and
// REST alike (docs/http.md#security), before anything else reads it.
type guard struct {
	origins  []string // allowed Origin values; empty: localhost origins only
	token    []byte   // bearer token; nil: none required
	identity string   // who a request with the token is, for the audit log: a digest of the token
	maxBody  int64
	loopback bool // listening on a loopback address: Host must be local too
}

// open lists the paths that need no bearer token (probes).
var openPaths = map[string]bool{"/healthz": true}

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.loopback && !isLocalHost(r.Host) {
			// DNS rebinding: a page on evil.example resolved to 127.0.0.1.
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed", o), http.StatusForbidden)
			return
		}
		if g.token != nil && !openPaths[r.URL.Path] && !g.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-gateway"`)
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		if g.identity != "" && g.token != nil && g.authorized(r) {
			r = r.WithContext(gateway.WithIdentity(r.Context(), g.identity))
		}
		if g.maxBody > 0 && r.Body != nil {
			if r.ContentLength > g.maxBody {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", g.maxBody), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
		}
		next.ServeHTTP(w, r)
	})
}

func (g *guard) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), g.token) == 1
}

func (g *guard) originAllowed(origin string) bool {
	if len(g.origins) == 0 {
		u, err := url.Parse(origin)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && isLocalHost(u.Host)
	}
	for _, o := range g.origins {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	return false
}

// isLocalHost reports whether a Host header (host[:port]) names this
// machine's loopback interface.
func isLocalHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return config.IsLoopbackHost(host)
}

// isLoopbackAddr reports whether a listen address binds loopback only.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return isLocalHost(host)
}
