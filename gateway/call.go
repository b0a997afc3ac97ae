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
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolCall is what serving a tools/call needs of its params; the
// arguments and _meta values stay raw, byte for byte.
type toolCall struct {
	name string
	args json.RawMessage
	meta map[string]json.RawMessage
}

// decodeToolCall reads tools/call params, with member names compared
// case-sensitively as go-sdk does.
func decodeToolCall(params json.RawMessage) (toolCall, error) {
	var tc toolCall
	if p := bytes.TrimSpace(params); len(p) == 0 || string(p) == "null" {
		return tc, errInvalidParams("params: missing")
	}
	var bad string
	err := wire.EachMember(params, func(name string, v json.RawMessage) {
		switch name {
		case "name":
			if json.Unmarshal(v, &tc.name) != nil {
				bad = "name must be a string"
			}
		case "arguments":
			tc.args = v
		case "_meta":
			if string(v) == "null" {
				return
			}
			tc.meta = make(map[string]json.RawMessage)
			if wire.EachMember(v, func(k string, mv json.RawMessage) { tc.meta[k] = mv }) != nil {
				bad = "_meta must be an object"
			}
		}
	})
	switch {
	case err != nil:
		return tc, errInvalidParams("params must be an object")
	case bad != "":
		return tc, errInvalidParams(bad)
	}
	return tc, nil
}

// serveToolCall is the one path of every tools/call a client sends: it
// returns the raw result, or the error the client sees. notify sends the
// call's progress to the client (nil: none).
func (f *front) serveToolCall(ctx context.Context, params json.RawMessage, notify func(*mcp.ProgressNotificationParams)) (json.RawMessage, *jsonrpc.Error) {
	tc, err := decodeToolCall(params)
	if err != nil {
		return nil, rpcError(err, kindTool, "", false)
	}
	if !f.initialized(tc.meta) {
		return nil, errNotInitialized
	}
	raw, err := f.callTool(ctx, tc, notify)
	if err != nil {
		return nil, rpcError(err, kindTool, tc.name, f.g.opts.Config.Server.Debug)
	}
	return raw, nil
}

// callTool routes one tools/call to whoever serves its tool.
func (f *front) callTool(ctx context.Context, tc toolCall, notify func(*mcp.ProgressNotificationParams)) (json.RawMessage, error) {
	if f.isAnswerTool(tc.name) {
		// The answer tools need no backend: never wait for them to start.
		return f.callAnswer(ctx, tc.name, tc.args)
	}
	r, ok := f.resolve(ctx, tc.name)
	if !ok {
		return nil, &notFoundError{kindTool, tc.name}
	}
	switch r.kind {
	case answerTool:
		return f.callAnswer(ctx, r.own, tc.args)
	case metaTool:
		return f.callMeta(ctx, r.own, tc, notify)
	}
	return f.callBackend(ctx, tc.name, r, tc.args, tc.meta, notify)
}

func (f *front) isAnswerTool(name string) bool {
	return f.g.opts.Answer != nil && answer.IsTool(name)
}

func (f *front) callAnswer(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	res, err := f.g.opts.Answer.Call(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return marshalResult(answer.CallToolResult(res))
}

// marshalResult encodes a result of the gateway's own as go-sdk would: no
// HTML escaping.
func marshalResult(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
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

// callBackend forwards one tools/call to its backend. The client's _meta goes along except its progressToken
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

// unreachable is the handler registered with each tool: go-sdk lists the
// tools, but the session serves every tools/call (session.go), because
// backend results must pass through as raw bytes, which mcp.ToolHandler
// cannot return.
func unreachable(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("internal error: tools/call bypassed the gateway's session")
}
