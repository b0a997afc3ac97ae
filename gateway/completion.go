package gateway

import (
	"context"
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// methodComplete is served by the session, raw both ways: go-sdk's
// CompleteResult would drop members such as "hasMore": false.
const methodComplete = "completion/complete"

// complete forwards completion/complete to the backend that serves what it
// refers to: the prompt's owner (under the name the owner knows it by), or
// the server that serves the resource or URI template. The params and the
// result pass unchanged but for the prompt's name.
func (f *front) complete(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	f.rebuild(ctx, settled) // a client may complete before listing
	var ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if wire.EachMember(params, func(string, json.RawMessage) {}) != nil {
		return nil, errInvalidParams("params must be an object")
	}
	rawRef := wire.Member(params, "ref")
	if json.Unmarshal(rawRef, &ref) != nil || !isObject(rawRef) {
		return nil, errInvalidParams("ref must be an object")
	}
	var (
		server, name, own string
		kind              = kindPrompt
		ok                bool
	)
	t := f.tables()
	switch ref.Type {
	case "ref/prompt":
		var r promptRoute
		r, ok = t.prompts[ref.Name]
		server, name, own = r.server, ref.Name, r.own
	case "ref/resource":
		kind, name = kindResource, ref.URI
		var r resourceRoute
		if r, ok = t.res[resourceKey{ref.URI, true}]; !ok {
			r, ok = t.res[resourceKey{ref.URI, false}]
		}
		server, own = r.server, r.own
	default:
		return nil, errInvalidParams("ref.type must be ref/prompt or ref/resource")
	}
	if !ok {
		return nil, called(kind, name, &notFoundError{kind, name})
	}
	if own != name {
		// The prompt under the name its owner knows it by, a ui:// URI
		// or template as its server wrote it; the rest as the client
		// wrote it.
		member := "name"
		if kind == kindResource {
			member = "uri"
		}
		quoted, _ := json.Marshal(own)
		newRef, err := wire.SetMember(rawRef, member, quoted)
		if err == nil {
			params, err = wire.SetMember(params, "ref", newRef)
		}
		if err != nil {
			return nil, errInvalidParams(err.Error())
		}
	}
	raw, err := f.g.opts.Backends.Request(ctx, server, methodComplete, params, backends.CallOptions{ClientCaps: f.backendCaps(callerOf(ctx).caps), Caller: f.upstream()})
	if err != nil {
		return nil, called(kind, name, err)
	}
	return raw, nil
}
