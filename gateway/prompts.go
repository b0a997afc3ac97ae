package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/mcp-gateway/mcp-gateway/backends"
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
	fps := make(map[string]string)
	for _, bp := range f.g.opts.Backends.Prompts() {
		var p mcp.Prompt
		if err := json.Unmarshal(bp.Raw, &p); err != nil {
			f.log.Warn("skipped a prompt the backend listed", "server", bp.Server, "prompt", bp.Name, "err", err)
			continue
		}
		p.Name = names.assign(bp.Server, prefixes[bp.Server], bp.Name)
		routes[p.Name] = promptRoute{server: bp.Server, own: bp.Name}
		defs[p.Name] = &p
		fps[p.Name] = fingerprint(&p)
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
	f.mu.Unlock()

	if len(gone) > 0 {
		f.server.RemovePrompts(gone...)
	}
	for _, name := range sortedKeys(defs) {
		if old[name] != fps[name] {
			f.register("prompt "+name, func() { f.server.AddPrompt(defs[name], f.getPrompt) })
		}
	}
	if !maps.Equal(old, fps) {
		f.changed(promptsList)
	}
}

// getPrompt forwards prompts/get to the backend that owns the prompt.
func (f *front) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	f.mu.Lock()
	r, ok := f.prompts[req.Params.Name]
	f.mu.Unlock()
	if !ok {
		return nil, rpcError(&notFoundError{kindPrompt, req.Params.Name}, kindPrompt, req.Params.Name, false)
	}
	params := map[string]any{"name": r.own}
	if len(req.Params.Arguments) > 0 {
		params["arguments"] = req.Params.Arguments
	}
	raw, err := f.g.opts.Backends.Request(ctx, r.server, "prompts/get", params, backends.CallOptions{})
	if err != nil {
		return nil, rpcError(err, kindPrompt, req.Params.Name, f.g.opts.Config.Server.Debug)
	}
	var res mcp.GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode prompts/get result of %s: %w", r.server, err)
	}
	return &res, nil
}
