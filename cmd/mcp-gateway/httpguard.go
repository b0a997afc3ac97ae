package main

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
)

// guard applies the HTTP front's security rules to every request, MCP and
// REST alike (docs/http.md#security), before anything else reads it: Host
// and Origin, CORS for the allowed origins, authentication, which puts the
// request's principal in its context (gateway.WithPrincipal), and the body
// limit.
type guard struct {
	origins  []string // allowed Origin values; empty: localhost origins only
	maxBody  int64
	loopback bool // listening on a loopback address: Host must be local too

	auth string // none, token or oauth
	// anonymous: with auth none, requests still get a principal (told
	// apart by address), for the policy or the rate limits; without
	// either they get none, and cost nothing more.
	anonymous bool
	token     []byte           // auth: token
	tokenP    *authn.Principal // every request with the token
	verifier  *authn.Verifier  // auth: oauth
	// upstreamPages: the per_user_login sign-in pages are served, and a
	// browser reaches them without a token (upstream_login.go).
	upstreamPages bool
}

// openPaths need no authentication: probes, what a client reads to learn
// how to authenticate (RFC 9728 metadata), and the per_user_login sign-in
// pages a browser opens, which carry their own sealed proof.
func (g *guard) open(path string) bool {
	if path == "/healthz" {
		return true
	}
	if g.verifier != nil {
		return path == authn.WellKnown || path == authn.MetadataPath(g.verifier.Resource()) ||
			g.upstreamPages && upstreamOpen(path)
	}
	return false
}

// ownPage reports whether r is a form of the per_user_login sign-in page
// posted from the gateway's own origin (whatever allowed_origins says:
// that is for other sites' pages).
func (g *guard) ownPage(r *http.Request, origin string) bool {
	if !g.upstreamPages || !upstreamOpen(r.URL.Path) {
		return false
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// The CORS headers of an allowed origin (docs/http.md#cors): a browser
// page may send the MCP headers and read the session, version and
// authentication challenge headers of the answers.
const (
	corsMethods = "GET, POST, DELETE, OPTIONS"
	corsExpose  = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
	corsMaxAge  = "600"
)

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && !carriesBody(r.Method) {
			// No handler reads it (GET /healthz with a body): see
			// refuseRequest.
			w.Header().Set("Connection", "close")
			defer dropBody(w)
		}
		if g.loopback && !isLocalHost(r.Host) {
			// DNS rebinding: a page on evil.example resolved to 127.0.0.1.
			refuseRequest(w, r, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			if !g.originAllowed(o) && !g.ownPage(r, o) {
				// No CORS headers: the page cannot read even this.
				refuseRequest(w, r, fmt.Sprintf("Forbidden: origin %q is not allowed", o), http.StatusForbidden)
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", o)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				// A preflight carries no credentials: it is answered
				// before authentication.
				h.Set("Access-Control-Allow-Methods", corsMethods)
				if req := r.Header.Get("Access-Control-Request-Headers"); req != "" && validHeaderList(req) {
					h.Set("Access-Control-Allow-Headers", req)
				}
				h.Set("Access-Control-Max-Age", corsMaxAge)
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.Set("Access-Control-Expose-Headers", corsExpose)
		}
		if !g.open(r.URL.Path) && (g.auth != "none" || g.anonymous) {
			p, ok := g.authenticate(w, r)
			if !ok {
				return
			}
			r = r.WithContext(gateway.WithPrincipal(r.Context(), p))
		}
		if g.maxBody > 0 && r.Body != nil {
			if r.ContentLength > g.maxBody {
				refuseRequest(w, r, fmt.Sprintf("request body exceeds %d bytes", g.maxBody), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate finds who a request comes from, or answers it (401, 403,
// 503) and reports false.
func (g *guard) authenticate(w http.ResponseWriter, r *http.Request) (*authn.Principal, bool) {
	switch g.auth {
	case "token":
		if subtle.ConstantTimeCompare([]byte(bearerToken(r)), g.token) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-gateway"`)
			refuseRequest(w, r, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return nil, false
		}
		return g.tokenP, true
	case "oauth":
		return g.oauth(w, r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return authn.Anonymous(host), true
}

// oauth checks a request's access token (gateway.http.auth: oauth): none
// or a bad one gets 401 with the challenge that names the metadata, one
// without the scopes every request needs 403 insufficient_scope, as the
// MCP authorization spec says.
func (g *guard) oauth(w http.ResponseWriter, r *http.Request) (*authn.Principal, bool) {
	v := g.verifier
	tok := bearerToken(r)
	if tok == "" {
		w.Header().Set("WWW-Authenticate", authn.Challenge(v.Resource(), nil, v.Scopes()))
		refuseRequest(w, r, "Unauthorized: an access token is required", http.StatusUnauthorized)
		return nil, false
	}
	p, err := v.Verify(r.Context(), tok)
	if err != nil {
		var e *authn.Error
		if !errors.As(err, &e) {
			e = &authn.Error{Code: "invalid_token", Description: err.Error()}
		}
		if e.Unavailable {
			refuseRequest(w, r, "Service Unavailable: the access token could not be checked: "+e.Description, http.StatusServiceUnavailable)
			return nil, false
		}
		w.Header().Set("WWW-Authenticate", authn.Challenge(v.Resource(), e, nil))
		refuseRequest(w, r, "Unauthorized: "+e.Description, http.StatusUnauthorized)
		return nil, false
	}
	if missing := p.HasScopes(v.Scopes()); len(missing) > 0 {
		e := &authn.Error{Code: "insufficient_scope", Description: "the token lacks the scope " + strings.Join(missing, " ")}
		w.Header().Set("WWW-Authenticate", authn.Challenge(v.Resource(), e, v.Scopes()))
		refuseRequest(w, r, "Forbidden: "+e.Description, http.StatusForbidden)
		return nil, false
	}
	return p, true
}

// bearerToken is the request's bearer token, or "".
func bearerToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
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

// validHeaderList reports whether s is a comma-separated list of header
// names, as a preflight's Access-Control-Request-Headers is: it is echoed
// back, so nothing else may pass.
func validHeaderList(s string) bool {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return false
		}
		for _, c := range f {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
				return false
			}
		}
	}
	return true
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

// refuseRequest answers r with code and msg before anything has read its
// body, and closes the connection instead of reading the body (dropBody).
func refuseRequest(w http.ResponseWriter, r *http.Request, msg string, code int) {
	if r.ContentLength == 0 {
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
	dropBody(w)
}

// dropBody makes the server close the connection of a request whose body
// nobody reads, at once, once its answer is written (with Connection:
// close). Go's server reads up to 256 KB of such a body after the handler,
// to serve a next request on the connection; a client that sent a head
// and trickled its body (slow POST, no credentials needed) held its
// connection - a request in flight, which no limit closes to make room -
// until the 60 s read timeout. Its next read fails now.
func dropBody(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// carriesBody reports whether a request of method has a body any handler
// reads: POST's (MCP's messages, REST's calls, the dashboard's forms).
func carriesBody(method string) bool { return method == http.MethodPost }
