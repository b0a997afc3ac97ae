package main

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcp-gateway/mcp-gateway/gateway"
)

// The dashboard's part of per_user_login (docs/teams.md): for each such
// server, whether the caller viewing the page is signed in, with a link to
// sign in (the same page a tool call's error links to) and a button to sign
// out (POST /upstream/logout, which deletes the caller's tokens and revokes
// them upstream).

// dashUpstream is one per_user_login server as the page shows it to the
// caller viewing it.
type dashUpstream struct {
	Server   string
	SignedIn bool
	Link     string // the caller's sign-in link
}

// upstreamSignIns are the per_user_login servers and the viewer's sign-ins;
// none without sign-ins to keep or a caller to keep them for.
func (d *dashboard) upstreamSignIns(r *http.Request) []dashUpstream {
	p := gateway.PrincipalOf(r.Context())
	if d.a.userLogins == nil || p == nil || p.Auth != "oauth" {
		return nil
	}
	var out []dashUpstream
	for _, s := range d.a.backends.PerUserServers() {
		out = append(out, dashUpstream{Server: s.Name, SignedIn: d.a.userLogins.SignedIn(s, p.Key), Link: d.a.userLogins.Link(s.Name, p.Key)})
	}
	return out
}

// upstreamLogout is POST /upstream/logout: the viewer signs out of server.
func (d *dashboard) upstreamLogout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := d.sameSite(r); err != nil {
		d.render(w, r, http.StatusForbidden, "Not signed out: "+err.Error()+".")
		return
	}
	p := gateway.PrincipalOf(r.Context())
	server := r.PostFormValue("server")
	if d.a.userLogins == nil || p == nil || p.Auth != "oauth" {
		d.render(w, r, http.StatusBadRequest, "Not signed out: there are no per-person sign-ins here.")
		return
	}
	if _, ok := d.a.backends.PerUserServer(server); !ok {
		d.render(w, r, http.StatusBadRequest, fmt.Sprintf("Not signed out: %s is not a per_user_login server.", shown(server)))
		return
	}
	had, err := d.a.userLogins.Logout(r.Context(), server, p.Key)
	d.a.backends.EndCallerSession(server, p.Key)
	text := fmt.Sprintf("Signed out of %s.", shown(server))
	switch {
	case err != nil && had:
		text = fmt.Sprintf("Signed out of %s; revoking the tokens upstream failed: %v", shown(server), err)
	case err != nil:
		d.render(w, r, http.StatusInternalServerError, "Not signed out: "+err.Error())
		return
	case !had:
		text = fmt.Sprintf("You were not signed in to %s.", shown(server))
	}
	http.Redirect(w, r, "/?"+url.Values{"approved": {d.notice(text)}}.Encode(), http.StatusSeeOther)
}
