package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
)

// The dashboard (docs/trust.md, "The dashboard"): one server-rendered page
// — backends and their states, each confined server's sandbox as applied,
// the definitions the trust layer withholds with their diffs and an
// Approve button, the tools clients see with the scanner's findings,
// recent audit entries, a registry search with an Add button
// (dashboard_add.go) — and the POSTs that approve and add.
// It is served by `mcp-gateway dashboard` on loopback and on / of the HTTP
// front, behind its bearer token. There is no script on the page: an
// approval or an add is a form POST carrying a token only the page holds (CSRF),
// refused from any other site (Origin, Sec-Fetch-Site), and the page may
// not be framed (no clickjacking of the Approve button).

// defaultDashboardListen is where `mcp-gateway dashboard` listens.
const defaultDashboardListen = "127.0.0.1:8300"

//go:embed dashboard.html
var dashboardHTML string

//go:embed dashboard.css
var dashboardCSS string

var dashboardTmpl = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"short":   backends.ShortDigest,
	"visible": shown,
	"line":    func(s string) string { return safetext.Visible(oneLine(s, 140)) },
	"ms":      func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"clock":   func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
	"css":     func() template.CSS { return template.CSS(dashboardCSS) },
	"hex12":   func(h string) string { return h[:min(12, len(h))] },
}).Parse(dashboardHTML))

// dashboardCSP allows the page's one style sheet (by its hash), its forms
// posting to itself, and nothing else: no script, no framing.
var dashboardCSP = func() string {
	sum := sha256.Sum256([]byte(dashboardCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}()

// dashboard serves the page for one app.
type dashboard struct {
	a    *app
	csrf string // the token every approval must carry; new for each process
	// notices are what the page says after an approval, by the id its
	// redirect carries (?approved=ID): the page shows only what this
	// process approved, never text from the URL.
	mu      sync.Mutex
	notices map[string]string
	order   []string // the ids, oldest first (at most maxNotices)
	// admit, if set, says why a request may not see the page or approve
	// (nil: it may): on the HTTP front with OAuth, only the callers
	// gateway.policy.admin names.
	admit func(*http.Request) error
	// drafts are the adds whose plan the page showed, waiting for
	// confirmation (dashboard_add.go).
	drafts addDrafts
}

func (a *app) newDashboard() *dashboard {
	return &dashboard{a: a, csrf: rand.Text()}
}

// routes registers the page on /, the approval on POST /approve, and
// adding a server from the registry on /add (dashboard_add.go).
func (d *dashboard) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", d.admitted(d.page))
	mux.HandleFunc("POST /approve", d.admitted(d.approve))
	mux.HandleFunc("GET /add", d.admitted(d.addPage))
	mux.HandleFunc("POST /add", d.admitted(d.addPreview))
	mux.HandleFunc("POST /add/confirm", d.admitted(d.addConfirm))
	mux.HandleFunc("POST /upstream/logout", d.admitted(d.upstreamLogout))
}

// admitted is h for the requests admit lets through; the others get 403
// with the reason.
func (d *dashboard) admitted(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.admit != nil {
			if err := d.admit(r); err != nil {
				http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
				return
			}
		}
		h(w, r)
	}
}

// dashChange is a withheld definition as the page shows it.
type dashChange struct {
	backends.Change
	Lines []dashLine
}

type dashLine struct{ Class, Text string }

type dashTool struct {
	gateway.ToolInfo
	Findings []backends.Finding
}

// dashSandbox is a confined server's confinement as the page shows it
// (what status prints under "sandboxes:").
type dashSandbox struct {
	Server, Mode string
	Summary      string // "fs ✓ net none mem — procs —"; "" when Refused
	Refused      string // why the sandbox did not let it start
	Proxy        string
	Allow        []string
	NotEnforced  []string
	Gaps         []string
}

// dashSandboxes are the confined servers of st, in order.
func dashSandboxes(st []backends.Status) []dashSandbox {
	var out []dashSandbox
	for _, s := range st {
		sb := s.Sandbox
		if sb == nil {
			continue
		}
		d := dashSandbox{Server: s.Name, Mode: sb.Mode}
		if sandboxRefused(s) {
			d.Refused = s.Error
		} else {
			d.Summary, d.Proxy, d.Allow, d.NotEnforced, d.Gaps = sb.Summary(), sb.Proxy, sb.Allow, sb.NotEnforced, sb.Gaps
		}
		out = append(out, d)
	}
	return out
}

type dashData struct {
	Now       time.Time
	CSRF      string
	Notice    string
	Problem   string
	Config    string
	PinFile   string
	PinError  string
	AuditPath string
	AuditErr  string
	Servers   []backends.Status
	Sandboxes []dashSandbox
	Changes   []dashChange
	Tools     []dashTool
	Flagged   int
	Audit     []audit.Entry
	Add       *dashAdd
	// Starting says what each starting server is doing, by name: its
	// last stderr line, or that npx is fetching its package.
	Starting map[string]string
	// Upstream are the per_user_login servers and the viewer's sign-ins
	// (dashboard_upstream.go).
	Upstream []dashUpstream
}

func (d *dashboard) data(r *http.Request) dashData {
	a := d.a
	dd := dashData{Now: time.Now(), CSRF: d.csrf, PinFile: a.backends.Trust().PinFile(), AuditPath: a.cfg.Gateway.Audit.Path,
		Servers: a.backends.Status()}
	dd.Sandboxes = dashSandboxes(dd.Servers)
	dd.Upstream = d.upstreamSignIns(r)
	// The configuration file as it is now: add's search box, and the
	// entries of servers a live reload added, for what they are doing.
	setup, err := d.addSetup()
	dd.Add = addSectionOf(setup, err)
	byName := map[string]config.Server{}
	for _, s := range a.cfg.Servers {
		byName[s.Name] = s
	}
	if setup != nil {
		for _, s := range setup.cfg.Servers {
			byName[s.Name] = s
		}
	}
	for _, s := range dd.Servers {
		if s.State != backends.Starting {
			continue
		}
		if note := startingNoteOf(s, byName[s.Name]); note != "" {
			if dd.Starting == nil {
				dd.Starting = map[string]string{}
			}
			dd.Starting[s.Name] = note
		}
	}
	if a.sources != nil && a.sources.YAML != nil {
		dd.Config = *a.sources.YAML
	}
	if err := a.backends.Trust().Err(); err != nil {
		dd.PinError = err.Error()
	}
	id := r.URL.Query().Get("approved")
	if id == "" {
		id = r.URL.Query().Get("added")
	}
	if id != "" {
		d.mu.Lock()
		dd.Notice = d.notices[id]
		d.mu.Unlock()
	}
	for _, c := range a.backends.Trust().Changes() {
		dc := dashChange{Change: c}
		for _, l := range strings.Split(strings.TrimSuffix(c.Diff, "\n"), "\n") {
			if l == "" {
				continue
			}
			class := map[byte]string{'+': "add", '-': "del", '@': "hunk"}[l[0]]
			dc.Lines = append(dc.Lines, dashLine{class, safetext.Visible(l)})
		}
		dd.Changes = append(dd.Changes, dc)
	}
	flagged := map[[2]string][]backends.Finding{}
	for _, f := range a.backends.Trust().Flagged() {
		if f.Kind == "tool" && !f.Withheld {
			flagged[[2]string{f.Server, f.Name}] = f.Findings
		}
	}
	for _, t := range a.gw.Tools() {
		dt := dashTool{ToolInfo: t, Findings: flagged[[2]string{t.Server, t.Own}]}
		if len(dt.Findings) > 0 {
			dd.Flagged++
		}
		dd.Tools = append(dd.Tools, dt)
	}
	if dd.AuditPath != "" {
		entries, err := audit.Tail(dd.AuditPath, 50)
		if err != nil {
			dd.AuditErr = err.Error()
		}
		slices.Reverse(entries)
		dd.Audit = entries
	}
	return dd
}

func setPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", dashboardCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make a form POST's Origin "null"
	h.Set("Cache-Control", "no-store")
}

func (d *dashboard) page(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, http.StatusOK, "")
}

func (d *dashboard) render(w http.ResponseWriter, r *http.Request, status int, problem string) {
	dd := d.data(r)
	dd.Problem = problem
	d.write(w, status, dd)
}

func (d *dashboard) write(w http.ResponseWriter, status int, dd dashData) {
	setPageHeaders(w)
	w.WriteHeader(status)
	if err := dashboardTmpl.Execute(w, dd); err != nil {
		d.a.log.Debug("dashboard page", "err", err)
	}
}

// sameSite reports whether a POST comes from the page itself: a browser
// says where a request comes from (Sec-Fetch-Site, Origin), and the form
// carries the page's token.
func (d *dashboard) sameSite(r *http.Request) error {
	if err := sameOrigin(r); err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(d.csrf)) != 1 {
		return errors.New("the form's token is not this page's: reload the page")
	}
	return nil
}

// approve is POST /approve: server, kind, name and digest name exactly the
// definition the page showed; one that changed since is not approved.
func (d *dashboard) approve(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := d.sameSite(r); err != nil {
		d.render(w, r, http.StatusForbidden, "Not approved: "+err.Error()+".")
		return
	}
	server, kind, name, digest := r.PostFormValue("server"), r.PostFormValue("kind"), r.PostFormValue("name"), r.PostFormValue("digest")
	approved, err := d.a.backends.Trust().Approve(server, func(c backends.Change) bool {
		return c.Kind == kind && c.Name == name && c.Digest == digest
	})
	switch {
	case err != nil:
		d.render(w, r, http.StatusInternalServerError, "Not approved: "+err.Error())
		return
	case len(approved) == 0:
		d.render(w, r, http.StatusConflict, fmt.Sprintf("Not approved: %s %s of %s is not withheld as shown any more (it changed again, or was approved elsewhere). Review it again below.", shown(kind), shown(name), shown(server)))
		return
	}
	if err := d.a.recordApprovals(approved, "dashboard", gateway.IdentityOf(r.Context())); err != nil {
		d.render(w, r, http.StatusInternalServerError, "Approved, but "+strings.TrimPrefix(err.Error(), "approved, but "))
		return
	}
	c := approved[0]
	id := d.notice(fmt.Sprintf("Approved %s of %s: clients are shown it now.", defName(c.Kind, shown(c.Name)), shown(c.Server)))
	http.Redirect(w, r, "/?"+url.Values{"approved": {id}}.Encode(), http.StatusSeeOther)
}

// maxNotices is how many approvals' notices the page keeps.
const maxNotices = 32

// notice keeps what the page is to say after an approval and returns the
// id its redirect carries.
func (d *dashboard) notice(text string) string {
	id := rand.Text()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.notices == nil {
		d.notices = make(map[string]string)
	}
	if len(d.order) == maxNotices {
		delete(d.notices, d.order[0])
		d.order = d.order[1:]
	}
	d.notices[id] = text
	d.order = append(d.order, id)
	return id
}

// serveDashboard is `mcp-gateway dashboard`: the page on loopback, over
// the backends this process starts (as status does), until a signal. What
// it approves, gateways running elsewhere on the same configuration see
// in the pin file at once.
func (a *app) serveDashboard(ctx context.Context) error {
	addr := a.inv.listen
	if addr == "" {
		addr = defaultDashboardListen
	}
	if !isLoopbackAddr(addr) {
		return usagef("dashboard listens on loopback only (it has no sign-in): --listen 127.0.0.1:PORT; for a team, use the page on / of --transport http, behind gateway.http.auth_token_env")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	a.newDashboard().routes(mux)
	g := &guard{maxBody: 64 << 10, loopback: true}
	srv := &http.Server{Handler: g.wrap(mux), ReadHeaderTimeout: httpReadHeaderTimeout, ReadTimeout: httpReadTimeout, IdleTimeout: httpIdleTimeout}
	a.backends.Start(ctx)
	stopReload := a.startReload(ctx)
	defer stopReload()
	fmt.Fprintf(a.env.stderr, "mcp-gateway dashboard on http://%s/\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("dashboard: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
