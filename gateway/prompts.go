package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncPrompts mirrors the backends' prompts, named like tools
// (prefix + separator + name).
func (f *front) syncPrompts(strict bool) {
	if f.g.opts.Backends == nil {
		return
	}
	names := newNameTable(f.g.namer(strict))
	prefixes := f.g.prefixes()
	routes := make(map[string]promptRoute)
	defs := make(map[string]*mcp.Prompt)
	fps := make(map[string]json.RawMessage)
	var listed []json.RawMessage
	for _, bp := range f.g.opts.Backends.Prompts() {
		name := names.assign(bp.Server, prefixes[bp.Server], bp.Name)
		quoted, _ := json.Marshal(name)
		// Listed as the backend wrote it, under the front name.
		def, err := wire.SetMember(bp.Raw, "name", quoted)
		var p mcp.Prompt
		if err == nil {
			err = json.Unmarshal(def, &p)
		}
		if err != nil {
			f.log.Warn("skipped a prompt the backend listed", "server", bp.Server, "prompt", bp.Name, "err", err)
			continue
		}
		routes[name] = promptRoute{server: bp.Server, own: bp.Name}
		defs[name] = &p
		fps[name] = def
		listed = append(listed, def)
	}
	var gone []string
	f.mu.Lock()
	old := f.promptFP
	for name := range old {
		if _, ok := fps[name]; !ok {
			gone = append(gone, name)
		}
	}
	f.prompts = routes
	f.promptFP = fps
	f.promptDefs = listed
	f.mu.Unlock()
	if f.stateless {
		return
	}

	if len(gone) > 0 {
		f.server.RemovePrompts(gone...)
	}
	for _, name := range sortedKeys(defs) {
		if !sameDef(old[name], fps[name]) {
			f.register("prompt "+name, func() { f.server.AddPrompt(defs[name], unreachablePrompt) })
		}
	}
	if !maps.EqualFunc(old, fps, sameDef) {
		f.changed(promptsList)
	}
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
	f.settle(ctx) // a client may get a prompt before listing
	f.mu.Lock()
	r, ok := f.prompts[name]
	f.mu.Unlock()
	debug := f.g.opts.Config.Server.Debug
	if !ok {
		return nil, rpcError(f.unknown(kindPrompt, name), kindPrompt, name, debug)
	}
	own, _ := json.Marshal(r.own)
	out := append(append([]byte(`{"name":`), own...), '}')
	if len(args) > 0 && string(args) != "null" {
		var err error
		if out, err = wire.SetMember(out, "arguments", args); err != nil {
			return nil, errInvalidParams(err.Error())
		}
	}
	raw, err := f.g.opts.Backends.Request(ctx, r.server, "prompts/get", json.RawMessage(out), backends.CallOptions{})
	if err != nil {
		return nil, rpcError(err, kindPrompt, name, debug)
	}
	return raw, nil
}

// unreachablePrompt is the handler registered with each prompt: go-sdk
// lists nothing and serves no prompts/get (the session does), its table
// only notifies changes.
func unreachablePrompt(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return nil, fmt.Errorf("internal error: prompts/get bypassed the gateway's session")
}
