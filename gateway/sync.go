package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// when is when rebuild builds the front's tables: the one thing in which
// its callers differ.
type when int

const (
	// always: now. A name was not found, a server it waited for is
	// ready, or the routes must follow a live list (call.go).
	always when = iota
	// ifBuilt: keep built tables current (a backend's lists changed, or
	// the caller's grant did). Before the client's first list or call
	// there is nothing to keep current: that builds the tables.
	ifBuilt
	// ifNone: build tables never built, without waiting for any backend
	// (lazy mode's tools/list, a listen, a held request).
	ifNone
	// settled: build the tables once, after the brief wait for backends
	// never seen before (waitFirstStarts), so that the first list a
	// client sees holds what is known of every backend. Every caller that
	// finds that first build unfinished waits and builds itself (builds
	// are serialised and idempotent): returning as soon as another caller
	// had begun would answer from tables still being built. A wait cut
	// short (ctx) builds nothing: the next list or call waits again.
	settled
)

// rebuild makes the front's tables match the answer tools and the
// backends' current lists, under this client's names and what it may see,
// when w says to. ctx bounds the wait of settled only.
func (f *front) rebuild(ctx context.Context, w when) {
	f.mu.Lock()
	built, done := f.synced, f.settled
	f.mu.Unlock()
	switch w {
	case ifBuilt:
		if !built {
			return
		}
	case ifNone:
		if built {
			return
		}
	case settled:
		if done {
			return
		}
		f.g.waitFirstStarts(ctx, f.upstream())
		if ctx.Err() != nil {
			return
		}
	}
	f.build()
	if w == settled {
		f.mu.Lock()
		f.settled = true
		f.mu.Unlock()
	}
}

// build makes new tables and stores them (rebuild); a list that changed is
// notified (front.changed). The new tables are one value, stored at once:
// a request reads either the old tables or the new ones, never a mix.
func (f *front) build() {
	f.rebuildMu.Lock()
	defer f.rebuildMu.Unlock()
	gens := f.g.opts.Backends.ListGenerations()
	f.mu.Lock()
	touched := [3]bool{f.synced && gens[0] != f.gens[0], f.synced && gens[1] != f.gens[1], f.synced && gens[2] != f.gens[2]}
	f.synced, f.gens = true, gens
	f.mu.Unlock()

	d, c, old := f.declared(), f.grant(), f.tables()
	next := new(tables)
	var same [3]bool
	same[toolsList] = f.syncTools(f.g.toolRoutesFor(d.naming, c.up), d, c, old, next)
	same[promptsList] = f.syncPrompts(d.naming, c, old, next)
	same[resourcesList] = f.syncResources(c, old, next)
	f.tab.Store(next)
	for list := range same {
		if !same[list] || touched[list] {
			f.changed(list, !same[list])
		}
	}
}

// syncTools makes next's tool tables t's, and its tools/list every tool
// the client may see; or, in lazy mode and for a client whose cap that
// list would pass (tools_mode: auto, clients.go), the answer tools and the
// meta tools, through which every tool stays reachable. It reports
// whether the list is old's.
func (f *front) syncTools(t *toolTable, d *declared, c *grant, old, next *tables) bool {
	all, order := t.routes, t.order
	hideAppOnly := !rendersApps(d.caps)
	listed := func(r toolRoute) bool { return !(hideAppOnly && r.app.only) && f.g.allowed(d, c, r) }
	lazy := f.g.lazy()
	var defs []json.RawMessage
	if !lazy {
		defs = make([]json.RawMessage, 0, len(order))
		for _, name := range order {
			if r := all[name]; (r.kind != metaTool || f.g.everyClientScripts(r)) && listed(r) {
				defs = append(defs, r.def)
			}
		}
		lazy = d.maxTools > 0 && len(defs) > d.maxTools
	}
	if lazy {
		defs = defs[:0]
		for _, name := range order {
			if r := all[name]; r.kind != backendTool && listed(r) {
				defs = append(defs, r.def)
			}
		}
	}
	var ix *toolsearch.Index
	if f.g.lazy() || d.maxTools > 0 {
		ix = t.findIndex(f.g.instructions)
	}
	down := f.g.notReady()
	// known keeps the tools of backends that are down now, for orphan:
	// those the last tables had (a backend that went down since left the
	// shared table) and those known before. It holds no copy of the
	// current tools, which the shared table has (with 50,000 tools a copy
	// per session was most of a session's memory).
	var known map[string]toolRoute
	for _, m := range []map[string]toolRoute{old.known, old.tools} {
		for name, r := range m {
			if r.kind == backendTool && down[r.server] {
				if known == nil {
					known = make(map[string]toolRoute)
				}
				known[name] = r
			}
		}
	}
	next.tools, next.known, next.findIndex, next.ownNames = all, known, ix, t.own
	next.toolDefs, next.lazyListed = defs, lazy
	return sameDefs(old.toolDefs, defs)
}

// sameDefs reports whether two lists hold the same definitions in the same
// order: each is kept as listed, so equal bytes are the same definition.
func sameDefs(a, b []json.RawMessage) bool {
	return slices.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// toolTable is what toolRoutes computed from the backends' tools and
// prefixes: shared, read only, by every session with its naming mode.
type toolTable struct {
	tools    []backends.Tool
	prefixes *map[string]string
	routes   map[string]toolRoute // front name → route
	order    []string             // the front names in listing order
	// own maps the own name of each tool of a backend with an app (apps.go)
	// to the front names of the tools that have it.
	own map[string][]string

	indexOnce sync.Once
	index     atomic.Pointer[toolsearch.Index] // lazy mode's find_tools index of routes, once built
	seed      *toolsearch.Index                // an earlier table's index, whose analysis of unchanged tools the index reuses
}

// findIndex is the find_tools index of the table, built on first use with
// the servers' instructions.
func (t *toolTable) findIndex(instructions func() map[string]string) *toolsearch.Index {
	t.indexOnce.Do(func() { t.index.Store(newFindIndex(t.routes, instructions(), t.seed)) })
	return t.index.Load()
}

// toolRoutes returns every tool a client with this naming can call,
// and the order they are listed in: the answer tools, lazy mode's meta
// tools, then each backend's tools, backends in configuration order and
// each backend's tools in its own order. The table is read only: it is
// computed again only when a backend's tools or the prefixes changed, so
// that a session (a sessionless HTTP request is one) costs one pass over the
// tools, not a rewrite of every definition or a new find_tools index.
func (g *Gateway) toolRoutes(n namer) *toolTable {
	tools := g.opts.Backends.Tools()
	prefixes := g.prefix.Load()
	g.routesMu.Lock()
	defer g.routesMu.Unlock()
	if t := g.routes[n]; t != nil && t.prefixes == prefixes && sameTools(t.tools, tools) {
		return t
	}
	routes, order := g.buildToolRoutes(n, tools, *prefixes)
	t := &toolTable{tools: tools, prefixes: prefixes, routes: routes, order: order, own: appOwnNames(routes, order)}
	if old := g.routes[n]; old != nil {
		// Only the newest index is kept as a seed, never a chain of them.
		if t.seed = old.index.Load(); t.seed == nil {
			t.seed = old.seed
		}
	}
	g.routes[n] = t
	return t
}

// sameTools reports whether a and b are the same definitions: a backend's
// list is replaced, never changed in place, when it changes.
func sameTools(a, b []backends.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Server != y.Server || x.Name != y.Name || len(x.Raw) != len(y.Raw) || len(x.Raw) > 0 && &x.Raw[0] != &y.Raw[0] {
			return false
		}
	}
	return true
}

// buildToolRoutes is toolRoutes' computation.
func (g *Gateway) buildToolRoutes(n namer, tools []backends.Tool, prefixes map[string]string) (map[string]toolRoute, []string) {
	out := make(map[string]toolRoute)
	var order []string
	own := func(kind toolKind, ownName string, t *mcp.Tool) {
		def, err := wire.Marshal(t)
		if err != nil {
			panic(err) // the gateway's own definitions are plain data
		}
		out[t.Name] = toolRoute{kind: kind, own: ownName, tool: t, def: def}
		order = append(order, t.Name)
	}
	if g.opts.Answer != nil {
		for _, t := range g.opts.Answer.Tools() {
			own(answerTool, t.Name, t)
		}
	}
	if g.opts.Config.Gateway.ToolsMode != "full" {
		// Lazy mode's, and auto's for the clients that get them
		// (allowed): their names are taken for every client.
		meta := metaTools(n, g.codeMode() != codeOff)
		for _, name := range metaOrder {
			own(metaTool, name, meta[name])
		}
	}
	if g.codeMode() != codeOff {
		own(metaTool, metaRunScript, g.runScriptTool(n))
	}
	names := newNameTable(n, order...)
	items := make([]nameItem, len(tools))
	for i, bt := range tools {
		items[i] = nameItem{bt.Server, prefixes[bt.Server], bt.Name}
	}
	for i, name := range names.assignAll(items) {
		bt := tools[i]
		if name == "" {
			continue // logged with the collisions
		}
		def, err := toolDef(bt.Raw, name)
		var app appMeta
		if err == nil {
			def, app = appTool(def, bt.Server)
		}
		var t *mcp.Tool
		if err == nil {
			t, err = frontTool(def)
		}
		if err != nil {
			g.log.Warn("skipped a tool the backend listed", "server", bt.Server, "tool", bt.Name, "err", err)
			continue
		}
		out[name] = toolRoute{kind: backendTool, server: bt.Server, own: bt.Name, tool: t, def: def, app: app, snapshot: bt.Snapshot}
		order = append(order, name)
	}
	for _, c := range names.collisions {
		if c.got == "" {
			g.log.Warn("tool name collision: the tool is not listed", "server", c.server, "tool", c.own, "wanted", c.wanted)
			continue
		}
		g.log.Warn("tool name collision resolved", "server", c.server, "tool", c.own, "wanted", c.wanted, "name", c.got)
	}
	return out, order
}

// toolDef is a backend's tool definition as a client lists it: every member
// as the backend wrote it, in its order, under the front name. Only an
// input schema without "type":"object", which MCP requires and clients
// enforce, is completed, and an output schema that is not an object is
// dropped.
func toolDef(raw json.RawMessage, name string) (json.RawMessage, error) {
	quoted, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	def, err := wire.SetMember(raw, "name", quoted)
	if err != nil {
		return nil, fmt.Errorf("decode tool: %w", err)
	}
	in := wire.Member(def, "inputSchema")
	if fixed := objectSchema(in); !bytes.Equal(fixed, bytes.TrimSpace(in)) {
		if def, err = wire.SetMember(def, "inputSchema", fixed); err != nil {
			return nil, err
		}
	}
	if out := bytes.TrimSpace(wire.Member(def, "outputSchema")); out != nil && (len(out) == 0 || out[0] != '{') {
		if def, err = wire.SetMember(def, "outputSchema", nil); err != nil {
			return nil, err
		}
	}
	return def, nil
}

func (g *Gateway) namer(strict bool) namer {
	return namer{sep: g.opts.Config.Gateway.Separator, strict: strict}
}

// prefixes maps each backend to its configured prefix.
func (g *Gateway) prefixes() map[string]string {
	return *g.prefix.Load()
}

// frontTool decodes a tool definition (toolDef's) into go-sdk's type, for
// go-sdk's table (which notifies list changes) and mcp-gateway tools; the
// schemas stay raw.
func frontTool(raw json.RawMessage) (*mcp.Tool, error) {
	var w struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Description  string               `json:"description,omitempty"`
		InputSchema  json.RawMessage      `json:"inputSchema"`
		OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
		Icons        []mcp.Icon           `json:"icons,omitempty"`
		Meta         map[string]any       `json:"_meta,omitempty"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decode tool: %w", err)
	}
	t := &mcp.Tool{
		Name:        w.Name,
		Title:       w.Title,
		Description: w.Description,
		InputSchema: objectSchema(w.InputSchema),
		Annotations: w.Annotations,
		Icons:       w.Icons,
		Meta:        w.Meta,
	}
	if s := bytes.TrimSpace(w.OutputSchema); len(s) > 0 && s[0] == '{' {
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

// inputSchema is the input schema of a tool caller up calls by name,
// under any naming (nil if no tool has it): what headers.go checks a
// call's Mcp-Param headers against.
func (g *Gateway) inputSchema(name string, up *backends.Caller) json.RawMessage {
	if r, ok := g.routeByName(name, up); ok {
		return wire.Member(r.def, "inputSchema")
	}
	return nil
}

// routeByName finds the route of a tool by the name a client calls it, in
// any naming, among the tools caller up is shown (toolRoutesFor).
func (g *Gateway) routeByName(name string, up *backends.Caller) (toolRoute, bool) {
	for _, n := range g.namers() {
		if r, ok := g.toolRoutesFor(n, up).routes[name]; ok {
			return r, true
		}
	}
	return toolRoute{}, false
}
