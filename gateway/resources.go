package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncResources mirrors the backends' resources and resource templates.
// URIs are not renamed; when two backends list the same URI, the first in
// configuration order serves it.
func (f *front) syncResources() {
	if f.g.opts.Backends == nil {
		return
	}
	owner := make(map[string]string)
	resources := make(map[string]*mcp.Resource)
	templates := make(map[string]*mcp.ResourceTemplate)
	fps := make(map[string]string)
	for _, br := range f.g.opts.Backends.Resources() {
		key := br.URI
		if br.Template {
			key = "template:" + br.URI
		}
		if prev, dup := owner[key]; dup {
			f.log.Warn("resource listed by two backends; the first serves it", "uri", br.URI, "server", prev, "ignored", br.Server)
			continue
		}
		if br.Template {
			var t mcp.ResourceTemplate
			if err := json.Unmarshal(br.Raw, &t); err != nil {
				f.log.Warn("skipped a resource template the backend listed", "server", br.Server, "uri", br.URI, "error", err)
				continue
			}
			templates[key] = &t
			fps[key] = fingerprint(&t)
		} else {
			var r mcp.Resource
			if err := json.Unmarshal(br.Raw, &r); err != nil {
				f.log.Warn("skipped a resource the backend listed", "server", br.Server, "uri", br.URI, "error", err)
				continue
			}
			resources[key] = &r
			fps[key] = fingerprint(&r)
		}
		owner[key] = br.Server
	}
	f.mu.Lock()
	old := f.resFP
	if !sameFingerprints(old, fps) {
		f.changed(resourcesList)
	}
	f.res = owner
	f.resFP = fps
	f.mu.Unlock()

	var goneRes, goneTmpl []string
	for key := range old {
		if _, ok := fps[key]; ok {
			continue
		}
		if uri, ok := cutTemplate(key); ok {
			goneTmpl = append(goneTmpl, uri)
		} else {
			goneRes = append(goneRes, key)
		}
	}
	if len(goneRes) > 0 {
		f.server.RemoveResources(goneRes...)
	}
	if len(goneTmpl) > 0 {
		f.server.RemoveResourceTemplates(goneTmpl...)
	}
	for _, key := range sortedKeys(fps) {
		if old[key] == fps[key] {
			continue
		}
		server := owner[key]
		read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return f.readResource(ctx, server, req)
		}
		if t, ok := templates[key]; ok {
			f.register("resource template "+t.URITemplate, func() { f.server.AddResourceTemplate(t, read) })
		} else {
			r := resources[key]
			f.register("resource "+r.URI, func() { f.server.AddResource(r, read) })
		}
	}
}

func cutTemplate(key string) (string, bool) {
	const p = "template:"
	if len(key) > len(p) && key[:len(p)] == p {
		return key[len(p):], true
	}
	return "", false
}

// readResource forwards resources/read to the backend that listed the
// resource (or the template that matched its URI).
func (f *front) readResource(ctx context.Context, server string, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	raw, err := f.g.opts.Backends.Request(ctx, server, "resources/read", req.Params, backends.CallOptions{})
	if err != nil {
		return nil, rpcError(err, req.Params.URI, f.g.opts.Config.Server.Debug)
	}
	var res mcp.ReadResourceResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode resources/read result of %s: %w", server, err)
	}
	return &res, nil
}
