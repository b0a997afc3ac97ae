package gateway

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/internal/policy"
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
func (f *front) syncResources(touched bool) {
	if f.g.opts.Backends == nil {
		return
	}
	owner := make(map[resourceKey]string)
	var denied map[resourceKey]string
	var listedRes, listedTmpl []json.RawMessage // as the backends wrote them
	var matchers []templateRoute
	f.mu.Lock()
	access := f.access
	f.mu.Unlock()
	for _, br := range f.g.opts.Backends.Resources() {
		key := resourceKey{br.URI, br.Template}
		if !access.Allows(policy.Resource, br.Server, "") {
			if denied == nil {
				denied = make(map[resourceKey]string)
			}
			denied[key] = br.Server
			continue
		}
		if prev, dup := owner[key]; dup {
			f.log.Warn("resource listed by two backends; the first serves it", "uri", br.URI, "server", prev, "ignored", br.Server)
			continue
		}
		var err error
		if br.Template {
			err = json.Unmarshal(br.Raw, new(mcp.ResourceTemplate))
		} else {
			err = json.Unmarshal(br.Raw, new(mcp.Resource))
		}
		if err != nil {
			f.log.Warn("skipped a resource the backend listed", "server", br.Server, "uri", br.URI, "err", err)
			continue
		}
		owner[key] = br.Server
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
	same := sameDefs(f.resourceDefs, listedRes) && sameDefs(f.templateDefs, listedTmpl)
	f.res, f.deniedRes = owner, denied
	f.resourceDefs, f.templateDefs, f.templates = listedRes, listedTmpl, matchers
	f.mu.Unlock()
	if !same || touched {
		f.changed(resourcesList, !same)
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
func (f *front) readResource(ctx context.Context, params json.RawMessage, stateless bool) (json.RawMessage, error) {
	res, err := f.read(ctx, params)
	if err != nil || !stateless {
		return res, err
	}
	// A result of the stateless era says how long it may be kept: as its
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
	f.settle(ctx) // a client need not have listed first
	b := f.g.opts.Backends
	debug := f.g.opts.Config.Server.Debug
	notFound := func() error { return rpcError(f.unknown(kindResource, uri), kindResource, uri, debug) }
	if b == nil {
		return nil, notFound()
	}
	if server, ok := f.resourceOwner(uri); ok {
		raw, err := f.forward(ctx, server, "resources/read", params)
		if err != nil {
			return nil, rpcError(err, kindResource, uri, debug)
		}
		return raw, nil
	}
	if f.hidden(policy.Resource, uri) {
		// Listed by a server the client may not see (reported by hidden).
		return nil, rpcError(&notFoundError{kindResource, uri}, kindResource, uri, debug)
	}
	for _, server := range b.ResourceServers() {
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
