package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config/registry"
)

// The dashboard's "Add a server" (docs/registry.md, "From the
// dashboard"): a registry search, an entry's required inputs as a form,
// the plan to confirm, and the add — the same draftAdd, describe and
// commit as `mcp-gateway add`. Still no script: each step is a GET or a
// form POST, and each POST carries the page's token and comes from the
// page (sameSite), as an approval does. A secret is typed into a password
// field, kept in this process's memory between the plan and its
// confirmation (a draft, by a random id), then stored in the secret store;
// no page, response or log line holds it.

// maxDrafts bounds the plans waiting for confirmation; draftTTL is how
// long one waits.
const (
	maxDrafts = 8
	draftTTL  = 15 * time.Minute
)

// dashAdd is the "Add a server" section as the page shows it.
type dashAdd struct {
	Unavailable string // why the page cannot add (no configuration file)
	Registry    string // the registry's URL
	Query       string
	Searched    bool
	Offline     string // the answer came from the cache: why, and of when
	Results     []dashResult
	Entry       *dashEntry
	Draft       *dashDraft
}

type dashResult struct{ Name, Version, RunsAs, Description string }

// dashEntry is one registry entry's add form: its required inputs.
type dashEntry struct {
	Name, Version, Description string
	ServerName                 string
	Fields                     []dashField
}

// dashField is a required input. Key is its form field: env.NAME,
// header.NAME or var.NAME, as --env, --header and --var give it. A
// secret's Value is always empty: the page never holds one.
type dashField struct {
	Key, Label, Description string
	Secret                  bool
	Choices                 []string
	Value                   string
}

// dashDraft is a plan waiting for confirmation: what describe says.
type dashDraft struct{ ID, Server, Text string }

// addDrafts are the plans the page showed and not yet confirmed, by id.
type addDrafts struct {
	mu     sync.Mutex
	byID   map[string]*heldDraft
	commit sync.Mutex // one commit at a time: read, compare, replace
}

type heldDraft struct {
	draft *addDraft
	at    time.Time
}

// put keeps d and returns its id; the oldest goes when there are
// maxDrafts, and those older than draftTTL go.
func (h *addDrafts) put(d *addDraft, now time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID == nil {
		h.byID = map[string]*heldDraft{}
	}
	h.expireLocked(now)
	if len(h.byID) >= maxDrafts {
		oldest := ""
		for id, hd := range h.byID {
			if oldest == "" || hd.at.Before(h.byID[oldest].at) {
				oldest = id
			}
		}
		delete(h.byID, oldest)
	}
	id := rand.Text()
	h.byID[id] = &heldDraft{d, now}
	return id
}

// take removes and returns the draft id names, nil if there is none (or
// it expired).
func (h *addDrafts) take(id string, now time.Time) *addDraft {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expireLocked(now)
	hd := h.byID[id]
	delete(h.byID, id)
	if hd == nil {
		return nil
	}
	return hd.draft
}

func (h *addDrafts) expireLocked(now time.Time) {
	for id, hd := range h.byID {
		if now.Sub(hd.at) > draftTTL {
			delete(h.byID, id)
		}
	}
}

// addSetup is the registry setup on the configuration file this gateway
// runs on, read now (it may have changed since the gateway started).
func (d *dashboard) addSetup() (*registrySetup, error) {
	if d.a.sources == nil || d.a.sources.YAML == nil {
		return nil, errors.New("the gateway runs without a configuration file to add to")
	}
	return setupRegistry(&registryInvocation{configPath: *d.a.sources.YAML}, d.a.env)
}

// addSectionOf is the section for a page with no add step to show: the
// search box, or why there is none.
func addSectionOf(setup *registrySetup, err error) *dashAdd {
	if err != nil {
		return &dashAdd{Unavailable: "Adding is off: " + err.Error() + "."}
	}
	return &dashAdd{Registry: setup.client.BaseURL}
}

// addPage is GET /add: ?q=TEXT searches the registry; ?name=N&version=V
// shows that entry's add form.
func (d *dashboard) addPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	setup, err := d.addSetup()
	if err != nil {
		d.renderAdd(w, r, http.StatusConflict, "", &dashAdd{Unavailable: "Adding is off: " + err.Error() + "."})
		return
	}
	add := &dashAdd{Registry: setup.client.BaseURL, Query: q.Get("q")}
	if name := q.Get("name"); name != "" {
		resp, ans, err := setup.client.Get(r.Context(), name, q.Get("version"))
		if err != nil {
			d.renderAdd(w, r, http.StatusBadGateway, err.Error(), add)
			return
		}
		add.Offline = offlineText(ans)
		entry, err := d.entryForm(setup, resp)
		if err != nil {
			d.renderAdd(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("%s@%s cannot be added: %v", shown(resp.Server.Name), shown(resp.Server.Version), err), add)
			return
		}
		add.Entry = entry
		d.renderAdd(w, r, http.StatusOK, "", add)
		return
	}
	list, ans, err := setup.client.Search(r.Context(), add.Query)
	if err != nil {
		d.renderAdd(w, r, http.StatusBadGateway, err.Error(), add)
		return
	}
	add.Searched, add.Offline = true, offlineText(ans)
	for _, e := range list {
		s := e.Server
		add.Results = append(add.Results, dashResult{Name: s.Name, Version: s.Version, RunsAs: strings.Join(runsAs(s), ", "), Description: s.Description})
	}
	d.renderAdd(w, r, http.StatusOK, "", add)
}

func offlineText(a registry.Answer) string {
	if !a.Offline {
		return ""
	}
	return fmt.Sprintf("Offline (%v): the registry's answer of %s.", a.Cause, a.FetchedAt.Local().Format(time.DateTime))
}

// entryForm is resp's add form: the required inputs add would ask for on
// a terminal, found by building the entry with an ask that records them
// (the one rule of which inputs are asked, registry.Build's).
func (d *dashboard) entryForm(setup *registrySetup, resp *registry.ServerResponse) (*dashEntry, error) {
	names := make([]string, 0, len(setup.cfg.Servers))
	for _, s := range setup.cfg.Servers {
		names = append(names, s.Name)
	}
	e := &dashEntry{Name: resp.Server.Name, Version: resp.Server.Version, Description: resp.Server.Description,
		ServerName: serverNameOf(resp.Server.Name, names)}
	var asked []registry.Question
	_, err := registry.Build(resp, registry.Options{Name: e.ServerName, Ask: func(q registry.Question) (string, error) {
		asked = append(asked, q)
		return "", nil
	}})
	if _, missing := errors.AsType[*registry.MissingError](err); err != nil && !missing {
		return nil, err
	}
	for _, q := range asked {
		e.Fields = append(e.Fields, fieldOf(q))
	}
	return e, nil
}

// fieldKinds are the form fields' prefixes by question kind: what --env,
// --header and --var give on the command line.
var fieldKinds = map[string]string{"environment variable": "env.", "header": "header.", "argument": "var.", "variable": "var."}

func fieldOf(q registry.Question) dashField {
	in := q.Input
	f := dashField{Key: fieldKinds[q.Kind] + q.Name, Label: q.Kind + " " + q.Name, Description: in.Description, Secret: in.IsSecret, Choices: in.Choices}
	if !in.IsSecret {
		f.Value = in.Default
	}
	return f
}

// addPreview is POST /add: the entry built with the form's values into a
// draft, whose plan the page shows with a button to confirm it.
func (d *dashboard) addPreview(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := d.sameSite(r); err != nil {
		d.renderAdd(w, r, http.StatusForbidden, "Not added: "+err.Error()+".", nil)
		return
	}
	setup, err := d.addSetup()
	if err != nil {
		d.renderAdd(w, r, http.StatusConflict, "", &dashAdd{Unavailable: "Adding is off: " + err.Error() + "."})
		return
	}
	add := &dashAdd{Registry: setup.client.BaseURL}
	resp, _, err := setup.client.Get(r.Context(), r.PostFormValue("name"), r.PostFormValue("version"))
	if err != nil {
		d.renderAdd(w, r, http.StatusBadGateway, "Not added: "+err.Error(), add)
		return
	}
	req := addRequest{serverName: r.PostFormValue("server"), env: map[string]string{}, headers: map[string]string{}, vars: map[string]string{}}
	into := map[string]map[string]string{"env.": req.env, "header.": req.headers, "var.": req.vars}
	for k, vs := range r.PostForm {
		for prefix, m := range into {
			if name, ok := strings.CutPrefix(k, prefix); ok && len(vs) == 1 && vs[0] != "" {
				m[name] = vs[0]
			}
		}
	}
	draft, err := draftAdd(setup, d.a.env, resp, req)
	if err != nil {
		// The form again, with what was typed except secrets.
		entry, ferr := d.entryForm(setup, resp)
		if ferr == nil {
			if n := r.PostFormValue("server"); n != "" {
				entry.ServerName = n
			}
			for i, f := range entry.Fields {
				if v := r.PostFormValue(f.Key); !f.Secret && v != "" {
					entry.Fields[i].Value = v
				}
			}
			add.Entry = entry
		}
		msg := err.Error()
		if missing, ok := errors.AsType[*registry.MissingError](err); ok {
			var labels []string
			for _, q := range missing.Needed {
				labels = append(labels, q.Kind+" "+q.Name)
			}
			msg = "required inputs have no value: " + strings.Join(labels, ", ")
		}
		d.renderAdd(w, r, http.StatusUnprocessableEntity, "Not added: "+msg, add)
		return
	}
	var text bytes.Buffer
	draft.describe(&text)
	add.Draft = &dashDraft{ID: d.drafts.put(draft, time.Now()), Server: draft.plan.Server.Name, Text: text.String()}
	d.renderAdd(w, r, http.StatusOK, "", add)
}

// addConfirm is POST /add/confirm: the draft the page showed is written
// (its secrets to the secret store, the entry to the file, atomically),
// or dropped (cancel). The running gateway picks the entry up by its live
// reload; its tools wait for approval (trust: approve).
func (d *dashboard) addConfirm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := d.sameSite(r); err != nil {
		d.renderAdd(w, r, http.StatusForbidden, "Not added: "+err.Error()+".", nil)
		return
	}
	draft := d.drafts.take(r.PostFormValue("id"), time.Now())
	if draft == nil {
		d.renderAdd(w, r, http.StatusConflict, "Not added: this plan is not waiting any more (it was added, cancelled, or expired after 15 minutes). Start again from the search.", nil)
		return
	}
	if r.PostFormValue("cancel") != "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	d.drafts.commit.Lock()
	err := draft.commit(d.a.env)
	d.drafts.commit.Unlock()
	if err != nil {
		d.renderAdd(w, r, http.StatusInternalServerError, "Not added: "+err.Error(), nil)
		return
	}
	s := draft.plan.Server
	d.a.log.Info("server added from the dashboard", "server", s.Name, "from", s.From, "config", draft.setup.path)
	id := d.notice(fmt.Sprintf("Added %s to %s (%s). The gateway starts it now; its tools wait for your approval (trust: approve).", shown(s.Name), draft.setup.path, shown(s.From)))
	http.Redirect(w, r, "/?"+url.Values{"added": {id}}.Encode(), http.StatusSeeOther)
}

// renderAdd is the page with add's section as given.
func (d *dashboard) renderAdd(w http.ResponseWriter, r *http.Request, status int, problem string, add *dashAdd) {
	dd := d.data(r)
	dd.Problem = problem
	if add != nil { // nil: the search box
		dd.Add = add
	}
	d.write(w, status, dd)
}
