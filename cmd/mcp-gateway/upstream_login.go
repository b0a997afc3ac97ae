package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// The pages of upstream_auth: {mode: per_user_login} (docs/teams.md,
// "per_user_login"): a caller's sign-in to an upstream server, in a
// browser, through the gateway.
//
//	GET  /upstream/login/{server}?state=LINK  the confirmation page: whose sign-in this is
//	POST /upstream/login/{server}             (state=LINK) sets the browser's nonce, redirects to the upstream
//	GET  /upstream/callback                   the upstream's answer: the code exchanged, the tokens stored
//
// A browser carries no bearer token, so these pages are open (the guard
// lets them through); what binds a sign-in to a caller is the link, sealed
// by the gateway, naming the caller and the server and expiring, which the
// caller got in their own tool call's error (or on the dashboard). The
// confirmation page names that caller before anything is sent upstream, so
// that a person given someone else's link sees that signing in would lend
// their upstream account to that someone; the flow's state carries a digest
// of a nonce kept in a cookie of the browser that confirmed, so that an
// authorization response replayed into another browser (login CSRF) is
// refused.

// upstreamCookie keeps the browser's nonce of the sign-in it began.
const upstreamCookie = "mcpgw_upstream_signin"

// cookie is the nonce's cookie, value and maxAge set. On https it is a
// __Host- cookie (Secure, Path=/, no Domain), which no other host can set:
// a sibling subdomain, which can set any cookie of the parent domain,
// would otherwise plant the nonce of a flow its owner began for themselves
// and send the person to that flow's authorization URL, binding the
// person's upstream account to its owner (TestUpstreamSignInCookieHostOnly).
func (u *upstreamLogins) cookie(value string, maxAge int) *http.Cookie {
	if u.secure {
		return &http.Cookie{Name: "__Host-" + upstreamCookie, Value: value, Path: "/", HttpOnly: true, Secure: true,
			SameSite: http.SameSiteLaxMode, MaxAge: maxAge}
	}
	return &http.Cookie{Name: upstreamCookie, Value: value, Path: "/upstream/", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: maxAge}
}

var upstreamPage = template.Must(template.New("upstream").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title></head><body>
<h1>{{.Title}}</h1>
{{if .Confirm}}
<p>This signs you in to <b>{{.Server}}</b> for the gateway user <b>{{.Caller}}</b>: whenever {{.Caller}} uses {{.Server}} through the gateway, it will act as the {{.Server}} account you sign in with next.</p>
<p><b>If you are not {{.Caller}}, close this page.</b> Someone gave you a link meant for them; signing in would let them use your {{.Server}} account.</p>
<form method="post" action="{{.Action}}"><input type="hidden" name="state" value="{{.State}}"><button type="submit">Sign in to {{.Server}}</button></form>
{{else}}
<p>{{.Text}}</p>
{{end}}
</body></html>
`))

type upstreamPageData struct {
	Title, Text                   string
	Confirm                       bool
	Server, Caller, Action, State string
}

// upstreamCSP: no script, no framing; the form posts to the gateway, whose
// answer redirects to the upstream's authorization server (Chromium holds
// a form's redirects to form-action too).
const upstreamCSP = "default-src 'none'; form-action 'self' https: http:; frame-ancestors 'none'; base-uri 'none'"

// upstreamLogins serves the pages over l.
type upstreamLogins struct {
	l      *backends.UserLogins
	secure bool // the gateway's public origin is https: the cookie is Secure
	a      *app
}

func (u *upstreamLogins) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /upstream/login/{server}", u.confirm)
	mux.HandleFunc("POST /upstream/login/{server}", u.begin)
	mux.HandleFunc("GET "+backends.UserLoginCallback, u.callback)
}

// upstreamOpen reports whether path is one of the pages, which need no
// bearer token (a browser has none).
func upstreamOpen(path string) bool {
	return strings.HasPrefix(path, "/upstream/login/") || path == backends.UserLoginCallback
}

func (u *upstreamLogins) write(w http.ResponseWriter, status int, d upstreamPageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", upstreamCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// The link's state must not reach the upstream as a Referer; and
	// no-referrer would make the form's POST say Origin: null, which the
	// guard and sameOrigin refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := upstreamPage.Execute(w, d); err != nil {
		u.a.log.Debug("upstream sign-in page", "err", err)
	}
}

func (u *upstreamLogins) fail(w http.ResponseWriter, status int, server string, err error) {
	title := "Sign-in failed"
	if server != "" {
		title = "Sign-in to " + server + " failed"
	}
	u.write(w, status, upstreamPageData{Title: title, Text: err.Error()})
}

// confirm is the page a sign-in link opens: it names the caller the
// sign-in is for and asks to go on.
func (u *upstreamLogins) confirm(w http.ResponseWriter, r *http.Request) {
	server, state := r.PathValue("server"), r.URL.Query().Get("state")
	caller, err := u.l.OpenLink(server, state)
	if err != nil {
		u.fail(w, http.StatusBadRequest, server, err)
		return
	}
	u.write(w, http.StatusOK, upstreamPageData{Title: "Sign in to " + server, Confirm: true, Server: server, Caller: caller,
		Action: backends.UserLoginPath(server), State: state})
}

// begin is the confirmation: it gives the browser a nonce and sends it to
// the upstream's authorization server.
func (u *upstreamLogins) begin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	server := r.PathValue("server")
	if err := sameOrigin(r); err != nil {
		u.fail(w, http.StatusForbidden, server, err)
		return
	}
	caller, err := u.l.OpenLink(server, r.PostFormValue("state"))
	if err != nil {
		u.fail(w, http.StatusBadRequest, server, err)
		return
	}
	nonce := rand.Text()
	to, err := u.l.Begin(r.Context(), server, caller, nonce)
	if err != nil {
		u.a.log.Warn("a per_user_login sign-in could not begin", "server", server, "err", err)
		u.fail(w, http.StatusBadGateway, server, err)
		return
	}
	http.SetCookie(w, u.cookie(nonce, 15*60))
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// callback is the upstream's authorization response.
func (u *upstreamLogins) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var nonce string
	if c, err := r.Cookie(u.cookie("", 0).Name); err == nil {
		nonce = c.Value
	}
	if e := q.Get("error"); e != "" {
		u.fail(w, http.StatusBadRequest, "", fmt.Errorf("the upstream's authorization server answered %q", e))
		return
	}
	if q.Get("code") == "" {
		u.fail(w, http.StatusBadRequest, "", errors.New("the authorization server sent no code"))
		return
	}
	server, caller, err := u.l.Complete(r.Context(), q.Get("state"), q.Get("code"), q.Get("iss"), nonce)
	if err != nil {
		u.fail(w, http.StatusBadRequest, server, err)
		return
	}
	http.SetCookie(w, u.cookie("", -1))
	// A new sign-in (maybe to another upstream account) replaces the
	// caller's session, which holds the old one's token.
	u.a.backends.EndCallerSession(server, caller)
	u.a.backends.OpenCallerSession(r.Context(), server, caller, u.a.cfg.FirstStartWait())
	u.write(w, http.StatusOK, upstreamPageData{Title: "Signed in to " + server,
		Text: "Signed in to " + server + " for " + caller + ". You can close this tab and call the tool again."})
}

// sameOrigin refuses a POST a browser says comes from another site.
func sameOrigin(r *http.Request) error {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return fmt.Errorf("a request from another site (%s)", s)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return errors.New("a request from another origin")
		}
	}
	return nil
}

// newUserLogins makes the per-caller sign-ins of per_user_login servers,
// for the HTTP front with OAuth (nil otherwise: no caller to sign in). Its
// links and redirect URI are on the gateway's public origin, the origin of
// gateway.http.oauth.resource.
func (a *app) newUserLogins(stateKey []byte) *backends.UserLogins {
	hc := a.cfg.Gateway.HTTP
	if hc.AuthMode() != "oauth" {
		return nil
	}
	u, err := url.Parse(hc.OAuth.Resource) // validated by config: an absolute URL
	if err != nil {
		return nil
	}
	return backends.NewUserLogins(backends.UserLoginOptions{
		TokenDir: a.tokenDir,
		Base:     u.Scheme + "://" + u.Host,
		StateKey: stateKey,
		// The Manager exists by the time a sign-in begins.
		Server: func(name string) (config.Server, bool) { return a.backends.PerUserServer(name) },
		Logger: a.log.With("component", "upstream-sign-in"),
	})
}
