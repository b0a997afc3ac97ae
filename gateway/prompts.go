package gateway

import (
	"context"
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncPrompts mirrors the backends' prompts in next, named like tools
// (prefix + separator + name). It reports whether the list is old's.
func (f *front) syncPrompts(naming namer, c *grant, old, next *tables) bool {
	names := newNameTable(naming)
	prefixes := f.g.prefixes()
	routes := make(map[string]promptRoute)
	var denied map[string]promptRoute
	var listed []json.RawMessage
	access := c.access
	prompts := f.g.opts.Backends.PromptsFor(c.up)
	items := make([]nameItem, len(prompts))
	for i, bp := range prompts {
		items[i] = nameItem{bp.Server, prefixes[bp.Server], bp.Name}
	}
	for i, name := range names.assignAll(items) {
		bp := prompts[i]
		if name == "" {
			f.log.Warn("prompt name collision: the prompt is not listed", "server", bp.Server, "prompt", bp.Name)
			continue
		}
		if !access.Allows(policy.Prompt, bp.Server, bp.Name) {
			if denied == nil {
				denied = make(map[string]promptRoute)
			}
			denied[name] = promptRoute{server: bp.Server, own: bp.Name}
			continue
		}
		quoted, _ := json.Marshal(name)
		// Listed as the backend wrote it, under the front name.
		def, err := wire.SetMember(bp.Raw, "name", quoted)
		if err == nil {
			var p mcp.Prompt
			err = json.Unmarshal(def, &p)
		}
		if err != nil {
			f.log.Warn("skipped a prompt the backend listed", "server", bp.Server, "prompt", bp.Name, "err", err)
			continue
		}
		routes[name] = promptRoute{server: bp.Server, own: bp.Name}
		listed = append(listed, def)
	}
	next.prompts, next.deniedPrompts, next.promptDefs = routes, denied, listed
	return sameDefs(old.promptDefs, listed)
}

// getPrompt serves prompts/get, raw both ways (go-sdk's GetPromptResult
// would drop members it does not know): the backend that owns the prompt
// gets it under its own name, with the client's arguments as written.
func (f *front) getPrompt(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	name, ok := wire.Unquote(wire.Member(params, "name"))
	if !ok {
		return nil, errInvalidParams("name must be a string")
	}
	args := wire.Member(params, "arguments")
	if len(args) > 0 && string(args) != "null" {
		// Prompt arguments are strings (MCP's schema).
		var bad string
		if wire.EachMember(args, func(k string, v json.RawMessage) {
			if _, ok := wire.Unquote(v); !ok && bad == "" {
				bad = "arguments." + k + " must be a string"
			}
		}) != nil {
			bad = "arguments must be an object"
		}
		if bad != "" {
			return nil, errInvalidParams(bad)
		}
	}
	f.rebuild(ctx, settled) // a client may get a prompt before listing
	r, ok := f.tables().prompts[name]
	if !ok {
		return nil, called(kindPrompt, name, f.unknown(kindPrompt, name))
	}
	own, _ := json.Marshal(r.own)
	out := append(append([]byte(`{"name":`), own...), '}')
	if len(args) > 0 && string(args) != "null" {
		var err error
		if out, err = wire.SetMember(out, "arguments", args); err != nil {
			return nil, errInvalidParams(err.Error())
		}
	}
	for _, m := range []string{"_meta", "inputResponses", "requestState"} { // _meta as forward passes it; a retry of the per-request era
		if v := wire.Member(params, m); v != nil {
			out, _ = wire.SetMember(out, m, v)
		}
	}
	raw, err := f.forward(ctx, r.server, "prompts/get", out)
	if err != nil {
		return nil, called(kindPrompt, name, err)
	}
	return raw, nil
}
