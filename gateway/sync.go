package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sync makes the front's tables match the answer tools and the backends'
// current lists, under this client's names. go-sdk sends list_changed for
// any difference.
func (f *front) sync() {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	f.mu.Lock()
	strict := f.strict
	f.synced = true
	f.mu.Unlock()

	tools := f.g.toolRoutes(strict)
	f.syncTools(tools)
	f.syncPrompts(strict)
	f.syncResources()
}

func (f *front) syncTools(all map[string]toolRoute) {
	listed := all
	var ix *toolIndex
	if f.g.opts.Config.Gateway.ToolsMode == "lazy" {
		listed = lazyListed(all)
		ix = newToolIndex(all)
	}
	fps := make(map[string]string, len(listed))
	for name, r := range listed {
		fps[name] = fingerprint(r.tool)
	}
	var down map[string]bool
	if f.g.opts.Backends != nil {
		down = f.g.notReady()
	}
	f.mu.Lock()
	old := f.toolFP
	// known keeps the tools of backends that are down now, for orphan;
	// it never outgrows the current tools plus those.
	known := make(map[string]toolRoute)
	for name, r := range f.known {
		if down[r.server] {
			known[name] = r
		}
	}
	for name, r := range all {
		if r.kind == backendTool {
			known[name] = r
		}
	}
	// Routes change before the listed table, so that a client finds every
	// tool it can list.
	f.tools, f.toolFP, f.known, f.findIndex = all, fps, known, ix
	f.mu.Unlock()

	var gone []string
	for name := range old {
		if _, ok := fps[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		f.server.RemoveTools(gone...)
	}
	for _, name := range sortedKeys(listed) {
		if old[name] != fps[name] {
			f.register("tool "+name, func() { f.server.AddTool(listed[name].tool, unreachable) })
		}
	}
	if !maps.Equal(old, fps) {
		f.changed(toolsList)
	}
}

// register calls add, which go-sdk may panic in on data it rejects; a
// backend's bad definition is logged and skipped, never fatal.
func (f *front) register(what string, add func()) {
	defer func() {
		if r := recover(); r != nil {
			f.log.Warn("skipped invalid definition from backend", "item", what, "err", r)
		}
	}()
	add()
}

func fingerprint(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// toolRoutes computes every tool a client with this naming mode can call:
// the answer tools, then each backend's tools in configuration order.
func (g *Gateway) toolRoutes(strict bool) map[string]toolRoute {
	out := make(map[string]toolRoute)
	var reserved []string
	if g.opts.Answer != nil {
		for _, t := range g.opts.Answer.Tools() {
			out[t.Name] = toolRoute{kind: answerTool, own: t.Name, tool: t}
			reserved = append(reserved, t.Name)
		}
	}
	if g.opts.Config.Gateway.ToolsMode == "lazy" {
		for own, t := range metaTools(g.namer(strict)) {
			out[t.Name] = toolRoute{kind: metaTool, own: own, tool: t}
			reserved = append(reserved, t.Name)
		}
	}
	if g.opts.Backends == nil {
		return out
	}
	names := newNameTable(g.namer(strict), reserved...)
	prefixes := g.prefixes()
	for _, bt := range g.opts.Backends.Tools() {
		t, err := frontTool(bt.Raw)
		if err != nil {
			g.log.Warn("skipped a tool the backend listed", "server", bt.Server, "tool", bt.Name, "err", err)
			continue
		}
		t.Name = names.assign(bt.Server, prefixes[bt.Server], bt.Name)
		out[t.Name] = toolRoute{kind: backendTool, server: bt.Server, own: bt.Name, tool: t}
	}
	for _, c := range names.collisions {
		g.log.Warn("tool name collision resolved", "server", c.server, "tool", c.own, "wanted", c.wanted, "name", c.got)
	}
	return out
}

func (g *Gateway) namer(strict bool) namer {
	return namer{sep: g.opts.Config.Gateway.Separator, strict: strict}
}

// prefixes maps each backend to its configured prefix.
func (g *Gateway) prefixes() map[string]string {
	return *g.prefix.Load()
}

// frontTool decodes a backend's tool definition for listing. The schemas
// stay raw (byte for byte) unless the input schema lacks "type":"object",
// which MCP requires and go-sdk enforces; it is then completed.
func frontTool(raw json.RawMessage) (*mcp.Tool, error) {
	var wire struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Description  string               `json:"description,omitempty"`
		InputSchema  json.RawMessage      `json:"inputSchema"`
		OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
		Icons        []mcp.Icon           `json:"icons,omitempty"`
		Meta         map[string]any       `json:"_meta,omitempty"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fmt.Errorf("decode tool: %w", err)
	}
	t := &mcp.Tool{
		Title:       wire.Title,
		Description: wire.Description,
		InputSchema: objectSchema(wire.InputSchema),
		Annotations: wire.Annotations,
		Icons:       wire.Icons,
		Meta:        wire.Meta,
	}
	if s := bytes.TrimSpace(wire.OutputSchema); len(s) > 0 && s[0] == '{' {
		// json.RawMessage, not the []byte TrimSpace returns: a []byte in
		// an `any` field is marshalled as a base64 string, which clients
		// that validate tools/list (the TypeScript SDK) reject, list and all.
		t.OutputSchema = json.RawMessage(s)
	}
	return t, nil
}

// objectSchema returns s when it is a JSON object with "type":"object", a
// copy with that member added when it is an object without a type, and
// {"type":"object"} otherwise.
func objectSchema(s json.RawMessage) json.RawMessage {
	s = bytes.TrimSpace(s)
	var m map[string]json.RawMessage
	if len(s) == 0 || s[0] != '{' || json.Unmarshal(s, &m) != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if string(m["type"]) == `"object"` {
		return s
	}
	m["type"] = json.RawMessage(`"object"`)
	out, _ := json.Marshal(m)
	return out
}
