package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	fps := make(map[resourceKey]string)
	for _, br := range f.g.opts.Backends.Resources() {
		key := resourceKey{br.URI, br.Template}
		if prev, dup := owner[key]; dup {
			f.log.Warn("resource listed by two backends; the first serves it", "uri", br.URI, "server", prev, "ignored", br.Server)
			continue
		}
		var (
			def any
			err error
		)
		if br.Template {
			t := new(mcp.ResourceTemplate)
			err, def = json.Unmarshal(br.Raw, t), t
			templates[key] = t
		} else {
			r := new(mcp.Resource)
			err, def = json.Unmarshal(br.Raw, r), r
			resources[key] = r
		}
		if err != nil {
			delete(templates, key)
			delete(resources, key)
			f.log.Warn("skipped a resource the backend listed", "server", br.Server, "uri", br.URI, "err", err)
			continue
		}
		owner[key] = br.Server
		fps[key] = fingerprint(def)
	}
	f.mu.Lock()
	old := f.resFP
	f.res, f.resFP = owner, fps
	f.mu.Unlock()

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
		if old[key] == fp {
			continue
		}
		read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return f.readResource(ctx, key, req)
		}
		if t, ok := templates[key]; ok {
			f.register("resource template "+t.URITemplate, func() { f.server.AddResourceTemplate(t, read) })
		} else {
			r := resources[key]
			f.register("resource "+r.URI, func() { f.server.AddResource(r, read) })
		}
	}
	if !maps.Equal(old, fps) {
		f.changed(resourcesList)
	}
}

// readResource forwards resources/read to the backend that serves the
// resource (or the template that matched its URI) now.
func (f *front) readResource(ctx context.Context, key resourceKey, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	f.mu.Lock()
	server, ok := f.res[key]
	f.mu.Unlock()
	debug := f.g.opts.Config.Server.Debug
	if !ok {
		return nil, rpcError(&notFoundError{kindResource, req.Params.URI}, kindResource, req.Params.URI, debug)
	}
	raw, err := f.g.opts.Backends.Request(ctx, server, "resources/read", req.Params, backends.CallOptions{})
	if err != nil {
		return nil, rpcError(err, kindResource, req.Params.URI, debug)
	}
	var res mcp.ReadResourceResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode resources/read result of %s: %w", server, err)
	}
	return &res, nil
}

// readUnlisted reads a resource that no backend listed and no listed
// template matches: a server may serve more than it lists. The backends
// that declared resources are asked in configuration order, and the first
// that reads it answers; if none does, the client gets notFound.
func (f *front) readUnlisted(ctx context.Context, p *mcp.ReadResourceParams, notFound error) (*mcp.ReadResourceResult, error) {
	b := f.g.opts.Backends
	if b == nil || p == nil {
		return nil, notFound
	}
	for _, server := range b.ResourceServers() {
		raw, err := b.Request(ctx, server, "resources/read", p, backends.CallOptions{})
		if err != nil {
			f.log.Debug("unlisted resource not read", "server", server, "uri", p.URI, "err", err)
			continue
		}
		var res mcp.ReadResourceResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("decode resources/read result of %s: %w", server, err)
		}
		return &res, nil
	}
	return nil, notFound
}
