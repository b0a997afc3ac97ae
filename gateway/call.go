package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTool routes one tools/call that go-sdk dispatched: the answer and
// meta tools, and backend calls the fast path did not take (lazy
// gateway.call_tool, calls before initialize).
func (f *front) callTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	name := req.Params.Name
	if f.isAnswerTool(name) {
		// The answer tools need no backend: never wait for them to start.
		return f.callAnswer(ctx, name, req.Params.Arguments)
	}
	r, ok := f.resolve(ctx, name)
	if !ok {
		return nil, &notFoundError{kindTool, name}
	}
	switch r.kind {
	case answerTool:
		return f.callAnswer(ctx, r.own, req.Params.Arguments)
	case metaTool:
		return f.callMeta(ctx, req, r.own)
	}
	var notify func(*mcp.ProgressNotificationParams)
	if ss := req.Session; ss != nil {
		notify = func(p *mcp.ProgressNotificationParams) { _ = ss.NotifyProgress(ctx, p) }
	}
	raw, err := f.callBackend(ctx, name, r, req.Params.Arguments, rawMeta(req.Params.Meta), notify)
	if err != nil {
		return nil, err
	}
	return &rawResult{raw: raw}, nil
}

func (f *front) isAnswerTool(name string) bool {
	return f.g.opts.Answer != nil && answer.IsTool(name)
}

// isGatewayTool reports whether name is one of the gateway's own tools (an
// answer tool, or a meta tool in lazy mode) under either naming mode.
func (f *front) isGatewayTool(name string) bool {
	if f.isAnswerTool(name) {
		return true
	}
	if f.g.opts.Config.Gateway.ToolsMode != "lazy" {
		return false
	}
	for _, strict := range []bool{false, true} {
		for _, t := range metaTools(f.g.namer(strict)) {
			if t.Name == name {
				return true
			}
		}
	}
	return false
}

func (f *front) callAnswer(ctx context.Context, name string, args json.RawMessage) (mcp.Result, error) {
	res, err := f.g.opts.Answer.Call(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return answer.CallToolResult(res), nil
}

// resolve finds what a tool name routes to: the current tables, else, once
// the backends have settled, the tables again or an orphan of a backend that
// is down.
func (f *front) resolve(ctx context.Context, name string) (toolRoute, bool) {
	if r, ok := f.lookupTool(name); ok {
		return r, true
	}
	f.settle(ctx) // a client may call before listing (mcp-gateway call does)
	if r, ok := f.lookupTool(name); ok {
		return r, true
	}
	return f.orphan(name)
}

func (f *front) lookupTool(name string) (toolRoute, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.tools[name]
	return r, ok
}

// orphan finds the backend a name belongs to when that backend is not ready
// — it crashed, is restarting, or failed to start — so that the call fails
// with the backend's state and stderr rather than "Tool not found". A name
// is an orphan when its backend listed it before, or when it carries the
// prefix of a configured server that is not ready.
func (f *front) orphan(name string) (toolRoute, bool) {
	if f.g.opts.Backends == nil {
		return toolRoute{}, false
	}
	down := f.g.downServers()
	f.mu.Lock()
	r, ok := f.known[name]
	strict := f.strict
	f.mu.Unlock()
	if ok && down[r.server] {
		return r, true
	}
	n := f.g.namer(strict)
	for server := range down {
		prefix := f.g.prefixes()[server]
		if prefix == "" {
			continue
		}
		if own, ok := strings.CutPrefix(name, n.name(prefix, "")); ok && own != "" {
			return toolRoute{kind: backendTool, server: server, own: own}, true
		}
	}
	return toolRoute{}, false
}

// downServers is the set of configured backends that are not ready.
func (g *Gateway) downServers() map[string]bool {
	down := make(map[string]bool)
	for _, st := range g.opts.Backends.Status() {
		if st.State != backends.Ready {
			down[st.Name] = true
		}
	}
	return down
}

// reservedMeta is the _meta key prefix MCP reserves for the protocol
// itself (per-request protocol version, client info and capabilities of
// 2026-07-28 clients): it describes the client's session with the gateway,
// not the backend's, and is never forwarded.
const reservedMeta = "io.modelcontextprotocol/"

// callBackend forwards one tools/call to its backend, for the fast and the
// slow path alike. The client's _meta goes along except its progressToken
// (the backends package puts its own) and reserved keys; the backend's
// progress comes back through notify under the client's token. notify runs
// on a goroutine of the call, never in the backend's read loop, and every
// progress notification is out before the call returns, so none can follow
// the response. When the client does not keep up, progress is dropped
// rather than queued without bound.
func (f *front) callBackend(ctx context.Context, name string, r toolRoute, args json.RawMessage, meta map[string]json.RawMessage, notify func(*mcp.ProgressNotificationParams)) (json.RawMessage, error) {
	if a := bytes.TrimSpace(args); len(a) > 0 && a[0] != '{' && string(a) != "null" {
		return nil, errInvalidParams("arguments must be a JSON object")
	}
	var (
		opts  backends.CallOptions
		token json.RawMessage
	)
	for k, v := range meta {
		switch {
		case k == "progressToken":
			token = v
		case strings.HasPrefix(k, reservedMeta):
		default:
			if opts.Meta == nil {
				opts.Meta = make(map[string]any, len(meta))
			}
			opts.Meta[k] = v
		}
	}
	if token != nil && notify != nil {
		queue := make(chan *mcp.ProgressNotificationParams, 64)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for p := range queue {
				notify(p)
			}
		}()
		// The backends package calls Progress only while CallTool runs.
		defer func() { close(queue); <-done }()
		opts.Progress = func(p *mcp.ProgressNotificationParams) {
			p.ProgressToken = token
			select {
			case queue <- p:
			default:
			}
		}
	}
	start := time.Now()
	raw, err := f.g.opts.Backends.CallTool(ctx, r.server, r.own, args, opts)
	f.log.Debug("tools/call", "tool", name, "server", r.server, "duration", time.Since(start), "ok", err == nil)
	return raw, err
}

// rawMeta turns go-sdk's decoded _meta back into JSON values.
func rawMeta(m map[string]any) map[string]json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		if b, err := json.Marshal(v); err == nil {
			out[k] = b
		}
	}
	return out
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
