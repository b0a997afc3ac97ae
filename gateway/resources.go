package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// resourceKey names a resource (by URI) or a resource template (by URI
// template).
type resourceKey struct {
	uri      string
	template bool
}

// syncResources mirrors the backends' resources and resource templates.
// URIs are not renamed; when two backends list the same URI, the first in
// configuration order serves it, and the next one takes over when the first
// is gone.
func (f *front) syncResources() {
	if f.g.opts.Backends == nil {
		return
	}
	owner := make(map[resourceKey]string)
	resources := make(map[resourceKey]*mcp.Resource)
	templates := make(map[resourceKey]*mcp.ResourceTemplate)
	fps := make(map[resourceKey]json.RawMessage)
	var listedRes, listedTmpl []json.RawMessage // as the backends wrote them
	var matchers []templateRoute
	for _, br := range f.g.opts.Backends.Resources() {
		key := resourceKey{br.URI, br.Template}
		if prev, dup := owner[key]; dup {
			f.log.Warn("resource listed by two backends; the first serves it", "uri", br.URI, "server", prev, "ignored", br.Server)
			continue
		}
		var err error
		if br.Template {
			t := new(mcp.ResourceTemplate)
			err = json.Unmarshal(br.Raw, t)
			templates[key] = t
		} else {
			r := new(mcp.Resource)
			err = json.Unmarshal(br.Raw, r)
			resources[key] = r
		}
		if err != nil {
			delete(templates, key)
			delete(resources, key)
			f.log.Warn("skipped a resource the backend listed", "server", br.Server, "uri", br.URI, "err", err)
			continue
		}
		owner[key] = br.Server
		fps[key] = br.Raw
		if br.Template {
			listedTmpl = append(listedTmpl, br.Raw)
			if t, err := uritemplate.New(br.URI); err == nil {
				matchers = append(matchers, templateRoute{t.Regexp(), br.Server})
			}
		} else {
			listedRes = append(listedRes, br.Raw)
		}
	}
	f.mu.Lock()
	old := f.resFP
	f.res, f.resFP = owner, fps
	f.resourceDefs, f.templateDefs, f.templates = listedRes, listedTmpl, matchers
	f.mu.Unlock()
	if f.stateless {
		return
	}

	var goneRes, goneTmpl []string
	for key := range old {
		if _, ok := fps[key]; ok {
			continue
		}
		if key.template {
			goneTmpl = append(goneTmpl, key.uri)
		} else {
			goneRes = append(goneRes, key.uri)
		}
	}
	if len(goneRes) > 0 {
		f.server.RemoveResources(goneRes...)
	}
	if len(goneTmpl) > 0 {
		f.server.RemoveResourceTemplates(goneTmpl...)
	}
	for key, fp := range fps {
		if sameDef(old[key], fp) {
			continue
		}
		if t, ok := templates[key]; ok {
			f.register("resource template "+t.URITemplate, func() { f.server.AddResourceTemplate(t, unreachableRead) })
		} else {
			r := resources[key]
			f.register("resource "+r.URI, func() { f.server.AddResource(r, unreachableRead) })
		}
	}
	if !maps.EqualFunc(old, fps, sameDef) {
		f.changed(resourcesList)
	}
}

// templateRoute is a listed resource template: what it matches, and the
// server that serves it.
type templateRoute struct {
	match  *regexp.Regexp
	server string
}

// resourceOwner finds the server that serves uri: the one that lists it,
// else the one whose template (the first listed that matches) matches it.
func (f *front) resourceOwner(uri string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if server, ok := f.res[resourceKey{uri, false}]; ok {
		return server, true
	}
	for _, t := range f.templates {
		if t.match.MatchString(uri) {
			return t.server, true
		}
	}
	return "", false
}

// readResource serves resources/read, raw both ways (go-sdk's
// ReadResourceResult would drop members it does not know and fill in
// others): the params go as the client wrote them to the server that lists
// the URI or a template matching it. A server may serve more than it lists:
// a URI nothing listed matches goes to the backends that declared
// resources, in configuration order, and the first that reads it answers;
// if none does, the client gets -32602.
func (f *front) readResource(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	uri, ok := wire.Unquote(wire.Member(params, "uri"))
	if !ok {
		return nil, errInvalidParams("uri must be a string")
	}
	f.settle(ctx) // a client need not have listed first
	b := f.g.opts.Backends
	debug := f.g.opts.Config.Server.Debug
	notFound := rpcError(&notFoundError{kindResource, uri}, kindResource, uri, debug)
	if b == nil {
		return nil, notFound
	}
	if server, ok := f.resourceOwner(uri); ok {
		raw, err := b.Request(ctx, server, "resources/read", params, backends.CallOptions{})
		if err != nil {
			return nil, rpcError(err, kindResource, uri, debug)
		}
		return raw, nil
	}
	for _, server := range b.ResourceServers() {
		raw, err := b.Request(ctx, server, "resources/read", params, backends.CallOptions{})
		if err != nil {
			f.log.Debug("unlisted resource not read", "server", server, "uri", uri, "err", err)
			continue
		}
		return raw, nil
	}
	return nil, notFound
}

// unreachableRead is the handler registered with each resource and
// template: go-sdk serves no resources/read (the session does), its tables
// only notify changes.
func unreachableRead(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, fmt.Errorf("internal error: resources/read bypassed the gateway's session")
}
