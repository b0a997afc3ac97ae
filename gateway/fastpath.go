package gateway

import (
	"context"
	"encoding/json"
	"sync"

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
	return &fastConn{Connection: conn, f: t.f, ctx: cctx, stop: stop,
		calls: make(map[jsonrpc.ID]*fastCall), ids: make(map[jsonrpc.ID]bool)}, nil
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
	calls map[jsonrpc.ID]*fastCall // in-flight fast calls
	// ids are the client's in-flight request ids on either path: go-sdk
	// never sees the fast calls, so it cannot reject a duplicate itself.
	ids map[jsonrpc.ID]bool
}

// Read returns the next message for go-sdk, after serving any backend tool
// calls that come first.
func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		if req.IsCall() {
			if !c.claim(req.ID) {
				// Not claimed: the call in flight keeps the id.
				_ = c.Connection.Write(c.ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "request ID already in use"}})
				continue
			}
			if req.Method == "tools/call" && c.take(req) {
				continue
			}
		} else if req.Method == "notifications/cancelled" {
			// Also passed on: go-sdk cancels its own calls.
			c.cancelled(req.Params)
		}
		return msg, nil
	}
}

// Write passes go-sdk's messages on, and frees the id of each response.
func (c *fastConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.release(resp.ID)
	}
	return c.Connection.Write(ctx, msg)
}

// claim records an incoming request id; it reports false for an id that is
// already in flight.
func (c *fastConn) claim(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids[id] {
		return false
	}
	c.ids[id] = true
	return true
}

func (c *fastConn) release(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.ids, id)
	c.mu.Unlock()
}

// fastCall is one call the fast path serves.
type fastCall struct {
	cancel context.CancelFunc
}

// reply ends a fast call: it forgets the call, frees its id and writes the
// response. The client may reuse the id as soon as it reads the response,
// so the call is forgotten first.
func (c *fastConn) reply(id jsonrpc.ID, call *fastCall, result json.RawMessage, rpcErr *jsonrpc.Error) {
	resp := &jsonrpc.Response{ID: id, Result: result}
	if rpcErr != nil {
		resp = &jsonrpc.Response{ID: id, Error: rpcErr}
	}
	c.mu.Lock()
	if c.calls[id] == call {
		delete(c.calls, id)
	}
	delete(c.ids, id)
	c.mu.Unlock()
	// A cancelled call's response is dropped by the stdio transport.
	if err := c.Connection.Write(c.ctx, resp); err != nil {
		c.f.log.Debug("write tools/call response", "error", err)
	}
}

// fastParams is what the fast path needs of tools/call params; the
// arguments and _meta values stay raw.
type fastParams struct {
	Name      string                     `json:"name"`
	Arguments json.RawMessage            `json:"arguments"`
	Meta      map[string]json.RawMessage `json:"_meta"`
}

// take starts serving req if it is a tools/call of an initialized session
// for anything but the gateway's own tools, and reports whether it did.
// Which backend it goes to is decided on the call's goroutine, where waiting
// for the backends to start cannot hold up the connection.
func (c *fastConn) take(req *jsonrpc.Request) bool {
	if c.f.currentSession() == nil {
		return false // go-sdk answers calls before initialize
	}
	var p fastParams
	if json.Unmarshal(req.Params, &p) != nil {
		return false // go-sdk answers with its own -32602
	}
	if c.f.isGatewayTool(p.Name) {
		return false
	}
	ctx, cancel := context.WithCancel(c.ctx)
	call := &fastCall{cancel: cancel}
	c.mu.Lock()
	c.calls[req.ID] = call
	c.mu.Unlock()
	c.wg.Add(1)
	go c.serve(ctx, req.ID, call, p)
	return true
}

func (c *fastConn) serve(ctx context.Context, id jsonrpc.ID, call *fastCall, p fastParams) {
	defer c.wg.Done()
	defer call.cancel()
	debug := c.f.g.opts.Config.Server.Debug
	r, ok := c.f.resolve(ctx, p.Name)
	if !ok || r.kind != backendTool {
		c.reply(id, call, nil, rpcError(&notFoundError{kindTool, p.Name}, kindTool, p.Name, debug))
		return
	}
	notify := func(pp *mcp.ProgressNotificationParams) {
		if params, err := json.Marshal(pp); err == nil {
			_ = c.Connection.Write(ctx, &jsonrpc.Request{Method: "notifications/progress", Params: params})
		}
	}
	raw, err := c.f.callBackend(ctx, p.Name, r, p.Arguments, p.Meta, notify)
	if err != nil {
		c.reply(id, call, nil, rpcError(err, kindTool, p.Name, debug))
		return
	}
	c.reply(id, call, raw, nil)
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
	if call, ok := c.calls[id]; ok {
		call.cancel()
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
