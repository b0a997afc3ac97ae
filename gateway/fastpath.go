package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path. A tools/call to a backend tool is the gateway's hot path,
// and go-sdk's session dispatch cost more than the proxying itself: two
// more JSON decodes with a 32 KiB buffer each, two goroutines and a typed
// request per call (docs/benchmarks.md). fastConn serves such a call
// straight from the client connection, the way httputil.ReverseProxy moves
// bytes itself: it reads the request, calls the backend, and writes the
// backend's raw result as the response. Everything else — initialize,
// lists, answer and meta tools, unknown names, orphans — goes to go-sdk,
// and so does any call the fast path cannot take whole.

// fastTransport wraps a client transport so that its connection serves
// backend tool calls itself.
type fastTransport struct {
	mcp.Transport
	f *front
}

func (t fastTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	return &fastConn{Connection: conn, f: t.f, ctx: cctx, stop: stop, calls: make(map[jsonrpc.ID]context.CancelFunc)}, nil
}

// fastConn is a client connection whose backend tool calls bypass go-sdk.
// Each such call runs in a goroutine owned by the connection: Close cancels
// them all and waits for them.
type fastConn struct {
	mcp.Connection
	f    *front
	ctx  context.Context // ends when the connection closes
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu    sync.Mutex
	calls map[jsonrpc.ID]context.CancelFunc // in-flight fast calls
}

// Read returns the next message for go-sdk, after serving any backend tool
// calls that come first.
func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if req, ok := msg.(*jsonrpc.Request); ok {
			switch req.Method {
			case "tools/call":
				if req.IsCall() && c.take(req) {
					continue
				}
			case "notifications/cancelled":
				// Also passed on: go-sdk cancels its own calls.
				c.cancelled(req.Params)
			}
		}
		return msg, nil
	}
}

// fastParams is what the fast path needs of tools/call params; the
// arguments and _meta values stay raw.
type fastParams struct {
	Name      string                     `json:"name"`
	Arguments json.RawMessage            `json:"arguments"`
	Meta      map[string]json.RawMessage `json:"_meta"`
}

// take starts serving req if it calls a listed backend tool of an
// initialized session, and reports whether it did.
func (c *fastConn) take(req *jsonrpc.Request) bool {
	if c.f.currentSession() == nil {
		return false // go-sdk answers calls before initialize
	}
	var p fastParams
	if json.Unmarshal(req.Params, &p) != nil {
		return false // go-sdk answers with its own -32602
	}
	r, ok := c.f.lookupTool(p.Name)
	if !ok || r.kind != backendTool {
		return false
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if _, dup := c.calls[req.ID]; dup {
		c.mu.Unlock()
		cancel()
		return false // go-sdk rejects a duplicate id
	}
	c.calls[req.ID] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go c.serve(ctx, req.ID, p, r)
	return true
}

func (c *fastConn) serve(ctx context.Context, id jsonrpc.ID, p fastParams, r toolRoute) {
	defer c.wg.Done()
	defer func() {
		c.mu.Lock()
		c.calls[id]()
		delete(c.calls, id)
		c.mu.Unlock()
	}()
	var opts backends.CallOptions
	for k, v := range p.Meta {
		if k == "progressToken" {
			token := v
			opts.Progress = func(pp *mcp.ProgressNotificationParams) {
				pp.ProgressToken = token
				params, err := json.Marshal(pp)
				if err == nil {
					_ = c.Connection.Write(ctx, &jsonrpc.Request{Method: "notifications/progress", Params: params})
				}
			}
			continue
		}
		if opts.Meta == nil {
			opts.Meta = make(map[string]any, len(p.Meta))
		}
		opts.Meta[k] = v
	}
	start := time.Now()
	raw, err := c.f.g.opts.Backends.CallTool(ctx, r.server, r.own, p.Arguments, opts)
	c.f.log.Debug("tools/call", "tool", p.Name, "server", r.server, "duration", time.Since(start), "ok", err == nil)
	resp := &jsonrpc.Response{ID: id, Result: raw}
	if err != nil {
		resp = &jsonrpc.Response{ID: id, Error: rpcError(err, p.Name, c.f.g.opts.Config.Server.Debug)}
	}
	// A cancelled call's response is dropped by the stdio transport.
	if err := c.Connection.Write(c.ctx, resp); err != nil {
		c.f.log.Debug("write tools/call response", "tool", p.Name, "error", err)
	}
}

// cancelled cancels a fast call named by a notifications/cancelled.
func (c *fastConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	c.mu.Lock()
	if cancel, ok := c.calls[id]; ok {
		cancel()
	}
	c.mu.Unlock()
}

// Close closes the connection, cancels the fast calls in flight and waits
// for them to end.
func (c *fastConn) Close() error {
	err := c.Connection.Close()
	c.stop()
	c.wg.Wait()
	return err
}
