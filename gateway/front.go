package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// front is the MCP server of one client connection: its tool, prompt and
// resource tables mirror the answer tools and the backends under this
// client's names, and its receiving middleware routes every call.
type front struct {
	g      *Gateway
	log    *slog.Logger
	server *mcp.Server

	// syncMu serialises sync, so that tables and routes change together.
	syncMu sync.Mutex

	mu       sync.Mutex
	session  *mcp.ServerSession
	client   string // clientInfo.name
	strict   bool
	settled  bool                   // backends had settled at the last sync
	tools    map[string]toolRoute   // front name → route
	known    map[string]toolRoute   // every backend tool ever listed, for orphans
	prompts  map[string]promptRoute // front name → route
	res      map[string]string      // resource URI or template → server
	toolFP   map[string]string      // front name → fingerprint of what is registered
	promptFP map[string]string
	resFP    map[string]string
	// versions counts changes per list (tools, prompts, resources); seen
	// is the version the client last listed, and listed whether it ever
	// did. A list_changed notification is sent only for a list the client
	// has seen and that changed since.
	versions, seen [3]uint64
	listed         [3]bool
}

// Lists whose changes are notified.
const (
	toolsList = iota
	promptsList
	resourcesList
)

// listOf maps a list method or list_changed notification to its list.
func listOf(method string) (int, bool) {
	switch method {
	case "tools/list", "notifications/tools/list_changed":
		return toolsList, true
	case "prompts/list", "notifications/prompts/list_changed":
		return promptsList, true
	case "resources/list", "resources/templates/list", "notifications/resources/list_changed":
		return resourcesList, true
	}
	return 0, false
}

// changed records a change to a list (f.mu held).
func (f *front) changed(list int) { f.versions[list]++ }

// toolKind says who serves a tool.
type toolKind int

const (
	answerTool toolKind = iota
	backendTool
	metaTool // lazy mode's gateway.* tools
)

type toolRoute struct {
	kind   toolKind
	server string // backend name (backendTool)
	own    string // the name its owner knows it by
	tool   *mcp.Tool
}

type promptRoute struct {
	server, own string
}

// route is the receiving middleware: the one place where the front decides
// what a request goes to.
func (f *front) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if err == nil {
				f.initialized(req)
			}
			return res, err
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			f.settle(ctx)
			list, _ := listOf(method)
			f.mu.Lock()
			f.seen[list] = f.versions[list] // read before listing: a later change still notifies
			f.listed[list] = true
			f.mu.Unlock()
			return next(ctx, method, req)
		case "tools/call":
			res, err := f.callTool(ctx, req.(*mcp.CallToolRequest))
			if err != nil {
				return nil, rpcError(err, req.(*mcp.CallToolRequest).Params.Name, f.g.opts.Config.Server.Debug)
			}
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// notify is the sending middleware. go-sdk sends list_changed for every
// change to a table, including the first build that the client's own first
// list triggers; the client needs one only when the list it last saw is out
// of date.
func (f *front) notify(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if list, ok := listOf(method); ok && strings.HasPrefix(method, "notifications/") {
			f.mu.Lock()
			stale := f.listed[list] && f.seen[list] != f.versions[list]
			f.mu.Unlock()
			if !stale {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// initialized records who the client is and picks its naming mode.
func (f *front) initialized(req mcp.Request) {
	name := ""
	if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil && p.ClientInfo != nil {
		name = p.ClientInfo.Name
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	strict := strictMode(f.g.opts.Config.Gateway.StrictNames, name)
	f.mu.Lock()
	f.session = ss
	f.client = name
	f.strict = strict
	f.mu.Unlock()
	f.log.Info("client connected", "client", name, "strict_names", strict)
}

func (f *front) currentSession() *mcp.ServerSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.session
}

// refresh re-syncs the tables after a backend changed. Before the client's
// first list (or call) there is nothing to refresh: settle builds the
// tables then, and the client is spared a burst of list_changed
// notifications while the backends start.
func (f *front) refresh() {
	f.mu.Lock()
	settled := f.settled
	f.mu.Unlock()
	if settled {
		f.sync()
	}
}

// settle waits for the backends to finish starting (once) and builds the
// tables, so that the first list a client sees is complete.
func (f *front) settle(ctx context.Context) {
	f.mu.Lock()
	settled := f.settled
	f.mu.Unlock()
	if settled {
		return
	}
	f.g.waitBackends(ctx)
	f.mu.Lock()
	f.settled = true
	f.mu.Unlock()
	f.sync()
}

// callTool routes one tools/call.
func (f *front) callTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	name := req.Params.Name
	r, ok := f.lookupTool(name)
	if !ok {
		// A client may call before listing (mcp-gateway call does).
		f.settle(ctx)
		if r, ok = f.lookupTool(name); !ok {
			if r, ok = f.orphan(name); !ok {
				return nil, &notFoundError{name}
			}
		}
	}
	start := time.Now()
	res, err := f.dispatch(ctx, req, r)
	f.log.Debug("tools/call", "tool", name, "server", r.server, "duration", time.Since(start), "ok", err == nil)
	return res, err
}

func (f *front) dispatch(ctx context.Context, req *mcp.CallToolRequest, r toolRoute) (mcp.Result, error) {
	switch r.kind {
	case answerTool:
		res, err := f.g.opts.Answer.Call(ctx, r.own, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		return answer.CallToolResult(res), nil
	case metaTool:
		return f.callMeta(ctx, req, r.own)
	default:
		raw, err := f.g.opts.Backends.CallTool(ctx, r.server, r.own, req.Params.Arguments, callOptions(ctx, req))
		if err != nil {
			return nil, err
		}
		return &rawResult{raw: raw}, nil
	}
}

// callOptions carries the client's _meta and progress token to a backend
// call; the backend's progress comes back under the client's own token.
func callOptions(ctx context.Context, req *mcp.CallToolRequest) backends.CallOptions {
	var opts backends.CallOptions
	if m := req.Params.Meta; len(m) > 0 {
		opts.Meta = make(map[string]any, len(m))
		for k, v := range m {
			if k != "progressToken" {
				opts.Meta[k] = v
			}
		}
	}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		ss := req.Session
		opts.Progress = func(p *mcp.ProgressNotificationParams) {
			p.ProgressToken = tok
			// The request's ctx ends with the call; a late progress
			// notification is dropped rather than sent after the result.
			_ = ss.NotifyProgress(ctx, p)
		}
	}
	return opts
}

// orphan finds the backend a name belongs to when that backend lists no
// tools now — it crashed, is restarting, or failed to start — so that the
// call fails with the backend's state and stderr rather than "Tool not
// found". A name is an orphan when it was listed before, or when it has a
// configured server's prefix and that server is not ready.
func (f *front) orphan(name string) (toolRoute, bool) {
	f.mu.Lock()
	r, ok := f.known[name]
	strict := f.strict
	f.mu.Unlock()
	if ok || f.g.opts.Backends == nil {
		return r, ok
	}
	n := f.g.namer(strict)
	for _, st := range f.g.opts.Backends.Status() {
		if st.State == backends.Ready {
			continue
		}
		prefix := f.g.prefixes()[st.Name]
		if prefix == "" {
			continue
		}
		if own, ok := strings.CutPrefix(name, n.name(prefix, "")); ok && own != "" {
			return toolRoute{kind: backendTool, server: st.Name, own: own}, true
		}
	}
	return toolRoute{}, false
}

func (f *front) lookupTool(name string) (toolRoute, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.tools[name]
	return r, ok
}

// rawResult is a backend's result passed through byte for byte.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// unreachable is the handler registered with each tool: the route
// middleware answers every tools/call before go-sdk's own dispatch, because
// backend results must pass through as raw bytes, which mcp.ToolHandler
// cannot return.
func unreachable(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("internal error: tools/call bypassed the gateway's router")
}

// sync makes the front's tables match the answer tools and the backends'
// current lists, under this client's names. go-sdk sends list_changed for
// any difference.
func (f *front) sync() {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	f.mu.Lock()
	strict := f.strict
	f.mu.Unlock()

	tools := f.g.toolRoutes(strict)
	f.syncTools(tools)
	f.syncPrompts(strict)
	f.syncResources()
}

func (f *front) syncTools(all map[string]toolRoute) {
	listed := all
	if f.g.opts.Config.Gateway.ToolsMode == "lazy" {
		listed = lazyListed(all)
	}
	fps := make(map[string]string, len(listed))
	for name, r := range listed {
		fps[name] = fingerprint(r.tool)
	}
	var gone []string
	f.mu.Lock()
	old := f.toolFP
	for name := range old {
		if _, ok := fps[name]; !ok {
			gone = append(gone, name)
		}
	}
	if !sameFingerprints(old, fps) {
		f.changed(toolsList)
	}
	f.tools = all
	f.toolFP = fps
	if f.known == nil {
		f.known = make(map[string]toolRoute)
	}
	for name, r := range all {
		if r.kind == backendTool {
			f.known[name] = r
		}
	}
	f.mu.Unlock()

	if len(gone) > 0 {
		f.server.RemoveTools(gone...)
	}
	for _, name := range sortedKeys(listed) {
		if old[name] == fps[name] {
			continue
		}
		f.register("tool "+name, func() { f.server.AddTool(listed[name].tool, unreachable) })
	}
}

// register calls add, which go-sdk may panic in on data it rejects; a
// backend's bad definition is logged and skipped, never fatal.
func (f *front) register(what string, add func()) {
	defer func() {
		if r := recover(); r != nil {
			f.log.Warn("skipped invalid definition from backend", "item", what, "error", r)
		}
	}()
	add()
}

func sameFingerprints(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
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
		for _, t := range metaTools(g.namer(strict)) {
			out[t.Name] = toolRoute{kind: metaTool, own: t.Name, tool: t}
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
			g.log.Warn("skipped a tool the backend listed", "server", bt.Server, "tool", bt.Name, "error", err)
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
	m := make(map[string]string, len(g.opts.Config.Servers))
	for _, s := range g.opts.Config.Servers {
		m[s.Name] = s.Prefix
	}
	return m
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
