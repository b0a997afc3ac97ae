package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// resourceKey names a resource (by URI) or a resource template (by URI
// template), as clients are shown it.
type resourceKey struct {
	uri      string
	template bool
}

// resourceRoute is where a resource or template a client names goes: the
// server that serves it, and the URI (or template) as that server knows it.
type resourceRoute struct {
	server string
	own    string
	ui     bool // own is a ui:// URI shown as ui://SERVER/... (uiFront)
}

// syncResources mirrors the backends' resources and resource templates
// in next (resourceTables). It reports whether the lists are old's.
func (f *front) syncResources(c *grant, old, next *tables) bool {
	access := c.access
	// What the policy hides is left out before the tables are made, and
	// kept by every URI a client may ask for it by (hidden).
	var denied map[resourceKey]string
	listed := f.g.opts.Backends.ResourcesFor(c.up)
	allowed := listed[:0:0]
	for _, br := range listed {
		if access.Allows(policy.Resource, br.Server, "") {
			allowed = append(allowed, br)
			continue
		}
		if denied == nil {
			denied = make(map[resourceKey]string)
		}
		denied[resourceKey{br.URI, br.Template}] = br.Server
		if front, ok := uiFront(br.Server, br.URI); ok {
			denied[resourceKey{front, br.Template}] = br.Server
		}
	}
	t := resourceTables(allowed, f.log)
	next.res, next.ownUI, next.deniedRes = t.routes, t.ownUI, denied
	next.resourceDefs, next.templateDefs, next.templates = t.resources, t.templates, t.matchers
	return sameDefs(old.resourceDefs, t.resources) && sameDefs(old.templateDefs, t.templates)
}

// resourceTable is what a front knows of the backends' resources.
type resourceTable struct {
	routes               map[resourceKey]resourceRoute
	ownUI                map[string][]string // a backend's own ui:// URI → the URIs clients are shown
	resources, templates []json.RawMessage   // as the backends wrote them (ui:// URIs as shown)
	matchers             []templateRoute
}

// resourceTables makes the tables of the backends' resources and
// templates. URIs are not renamed, but for the ui:// ones of MCP Apps
// (uiFront), which carry their server's name: every backend's app would
// otherwise be called ui://get-time/mcp-app.html alike. When two backends
// list the same URI, the first in configuration order serves it, and the
// next one takes over when the first is gone.
func resourceTables(list []backends.Resource, log *slog.Logger) resourceTable {
	t := resourceTable{routes: make(map[resourceKey]resourceRoute)}
	for _, br := range list {
		route := resourceRoute{server: br.Server, own: br.URI}
		uri, raw := br.URI, br.Raw
		if front, ok := uiFront(br.Server, br.URI); ok {
			field := "uri"
			if br.Template {
				field = "uriTemplate"
			}
			if e, ok := uiEdit(raw, wire.Member(raw, field), br.Server); ok {
				raw = spliceURIs(raw, []uriEdit{e})
			}
			uri, route.ui = front, true
		}
		key := resourceKey{uri, br.Template}
		if prev, dup := t.routes[key]; dup {
			log.Warn("resource listed by two backends; the first serves it", "uri", uri, "server", prev.server, "ignored", br.Server)
			continue
		}
		var err error
		if br.Template {
			err = json.Unmarshal(raw, new(mcp.ResourceTemplate))
		} else {
			err = json.Unmarshal(raw, new(mcp.Resource))
		}
		if err != nil {
			log.Warn("skipped a resource the backend listed", "server", br.Server, "uri", br.URI, "err", err)
			continue
		}
		t.routes[key] = route
		switch {
		case br.Template:
			t.templates = append(t.templates, raw)
			if tmpl, err := uritemplate.New(uri); err == nil {
				t.matchers = append(t.matchers, templateRoute{tmpl.Regexp(), route})
			}
		default:
			t.resources = append(t.resources, raw)
			if route.ui {
				if t.ownUI == nil {
					t.ownUI = make(map[string][]string)
				}
				t.ownUI[br.URI] = append(t.ownUI[br.URI], uri)
			}
		}
	}
	return t
}

// uiScheme is the scheme of MCP Apps' UI resources.
const uiScheme = "ui://"

// uiFront is the URI (or URI template) clients are shown for a backend's
// ui:// one: ui://SERVER/REST for ui://REST. It is a pure function of the
// server's configured name and the backend's URI, so it is the same in
// every run and every session, and reversible (uiOwn); ok is false for a
// URI of another scheme, which is shown as the backend wrote it.
func uiFront(server, uri string) (front string, ok bool) {
	rest, ok := strings.CutPrefix(uri, uiScheme)
	if !ok {
		return uri, false
	}
	return uiScheme + server + "/" + rest, true
}

// uiOwn reverses uiFront: the server a client's ui:// URI names, and the
// URI as that server knows it.
func uiOwn(uri string) (server, own string, ok bool) {
	rest, ok := strings.CutPrefix(uri, uiScheme)
	if !ok {
		return "", "", false
	}
	server, rest, ok = strings.Cut(rest, "/")
	if !ok || server == "" {
		return "", "", false
	}
	return server, uiScheme + rest, true
}

// templateRoute is a listed resource template: what it matches (as
// clients are shown it), and where it goes.
type templateRoute struct {
	match *regexp.Regexp
	route resourceRoute // own is the template as its backend wrote it
}

// resourceRoute finds where a URI a client names goes: to the server that
// lists it, else the one whose template (the first listed that matches)
// matches it, else — a ui:// URI as clients are shown it — the server it
// names, if that server serves resources and the policy shows them (a
// hidden one is not found, and reported). A backend's own ui:// URI, as
// it wrote it, goes to the one backend that lists it; when several do, it
// is ambiguous, and the error names the URIs to use instead.
func (f *front) resourceRoute(uri string) (resourceRoute, bool, error) {
	tab := f.tables()
	r, ok := tab.res[resourceKey{uri, false}]
	if !ok {
		for _, t := range tab.templates {
			if t.match.MatchString(uri) {
				r, ok = t.route, true
				r.own = uri
				if r.ui {
					_, r.own, _ = uiOwn(uri)
				}
				break
			}
		}
	}
	shown := tab.ownUI[uri]
	switch {
	case ok:
		return r, true, nil
	case len(shown) == 1:
		return f.resourceRoute(shown[0])
	case len(shown) > 1:
		return resourceRoute{}, false, &ambiguousError{kindResource, uri, shown}
	}
	if server, own, ok := uiOwn(uri); ok && slices.Contains(f.g.opts.Backends.Declaring("resources"), server) {
		// Not in the tables, which hold only what the policy shows: the
		// URI names its server, whose resources the policy may hide.
		if e := f.grant().access.Explain(policy.Resource, server, ""); !e.Allowed && !f.appOfShownTool(server, uri) {
			f.deny(policy.Resource, uri, server, "", e)
			return resourceRoute{}, false, &notFoundError{kindResource, uri}
		}
		return resourceRoute{server: server, own: own, ui: true}, true, nil
	}
	return resourceRoute{}, false, nil
}

// appOfShownTool reports whether a tool of server the client is shown
// names uri (as shown) as its app (_meta.ui.resourceUri, or the older
// _meta["ui/resourceUri"]): a caller the policy allows such a tool, but
// not its server's resources, still loads the tool's app, as its host
// would directly; nothing else of the server's.
func (f *front) appOfShownTool(server, uri string) bool {
	names := func(v json.RawMessage) bool {
		u, ok := wire.Unquote(v)
		return ok && u == uri
	}
	for _, r := range f.tables().tools {
		if r.kind != backendTool || r.server != server || !r.app.ui || !f.allowed(r) {
			continue
		}
		meta := wire.Member(r.def, "_meta")
		if names(wire.Member(wire.Member(meta, "ui"), "resourceUri")) || names(wire.Member(meta, "ui/resourceUri")) {
			return true
		}
	}
	return false
}

// ownParams are a request's params for the backend a resource route
// names: the URI as the backend knows it, the rest as the client wrote it.
func (r resourceRoute) ownParams(params json.RawMessage, member, uri string) (json.RawMessage, error) {
	if r.own == uri {
		return params, nil
	}
	quoted, _ := json.Marshal(r.own)
	return wire.SetMember(params, member, quoted)
}

// shownContents is a resources/read result of a ui:// route as the client
// is shown it: each content's ui:// uri as uiFront makes it, every other
// byte (the HTML above all) as the backend wrote it, in one copy: a UI is
// hundreds of kilobytes (BenchmarkAppsReadResult).
func (r resourceRoute) shownContents(res json.RawMessage) json.RawMessage {
	if !r.ui {
		return res
	}
	var edits []uriEdit
	err := wire.EachElement(wire.Member(res, "contents"), func(c json.RawMessage) {
		if e, ok := uiEdit(res, wire.Member(c, "uri"), r.server); ok {
			edits = append(edits, e)
		}
	})
	if err != nil {
		return res
	}
	return spliceURIs(res, edits)
}

// readResource serves resources/read, raw both ways (go-sdk's
// ReadResourceResult would drop members it does not know and fill in
// others): the params go as the client wrote them to the server that lists
// the URI or a template matching it. A server may serve more than it lists:
// a URI nothing listed matches goes to the backends that declared
// resources, in configuration order, and the first that reads it answers;
// if none does, the client gets -32602.
func (f *front) readResource(ctx context.Context, params json.RawMessage, era wire.Era) (json.RawMessage, error) {
	res, err := f.read(ctx, params)
	if err != nil || era == wire.HandshakeEra {
		return res, err
	}
	// A result of the per-request era says how long it may be kept: as its
	// backend said, else stale at once, and only for this client.
	if wire.Member(res, "ttlMs") == nil {
		res, _ = wire.SetMember(res, "ttlMs", json.RawMessage(`0`))
	}
	if wire.Member(res, "cacheScope") == nil {
		res, _ = wire.SetMember(res, "cacheScope", json.RawMessage(`"private"`))
	}
	return res, nil
}

// read forwards resources/read (readResource).
func (f *front) read(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	uri, ok := wire.Unquote(wire.Member(params, "uri"))
	if !ok {
		return nil, errInvalidParams("uri must be a string")
	}
	f.rebuild(ctx, settled) // a client need not have listed first
	b := f.g.opts.Backends
	notFound := func() error { return called(kindResource, uri, f.unknown(kindResource, uri)) }
	route, ok, err := f.resourceRoute(uri)
	if err != nil {
		return nil, called(kindResource, uri, err)
	}
	if ok {
		own, err := route.ownParams(params, "uri", uri)
		if err != nil {
			return nil, errInvalidParams(err.Error())
		}
		raw, err := f.forward(ctx, route.server, "resources/read", own)
		if err != nil {
			return nil, called(kindResource, uri, err)
		}
		return route.shownContents(raw), nil
	}
	if f.hidden(policy.Resource, uri) {
		// Listed by a server the client may not see (reported by hidden).
		return nil, called(kindResource, uri, &notFoundError{kindResource, uri})
	}
	for _, server := range b.Declaring("resources") {
		if !f.allowsResources(server) {
			continue
		}
		raw, err := f.forward(ctx, server, "resources/read", params)
		if err != nil {
			f.log.Debug("unlisted resource not read", "server", server, "uri", uri, "err", err)
			continue
		}
		return raw, nil
	}
	return nil, notFound()
}
