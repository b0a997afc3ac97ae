package backends

import (
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/rpcconn"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// conn is a session's connection to its backend: the JSON-RPC connection
// (rpcconn) and what the session learned of the protocol it speaks. The
// supervisor owns it; the Manager reads it through readyConn.
type conn struct {
	*rpcconn.Conn

	// era, once the handshake found the backend speaks the per-request
	// era, is what every request's _meta says (era.go); nil in the
	// handshake era. Read it through protocolEra.
	era   atomic.Pointer[requestMeta]
	level func() string // the log level clients asked for ("" for none)

	mu   sync.Mutex
	subs map[string]CancelFunc // resource subscriptions' listens, by URI (per-request era)
}

// newConn returns b's connection over w, which writes into a pipe of
// capacity pipe (the zero PipeCap for a remote, whose writes only queue).
// Its read side starts with ReadLoop.
func (b *backend) newConn(w io.WriteCloser, pipe rpcconn.PipeCap) *conn {
	c := &conn{level: b.m.level}
	h := b.hooks()
	h.Stamp = c.stamp
	c.Conn = rpcconn.New(w, rpcconn.Options{Log: b.log, Pipe: pipe, Hooks: h})
	return c
}

// protocolEra returns the era the connection speaks to its backend.
func (c *conn) protocolEra() wire.Era {
	if c.era.Load() != nil {
		return wire.PerRequestEra
	}
	return wire.HandshakeEra
}

// stamp is the connection's rpcconn.Hooks.Stamp: in the per-request era,
// params carry the era's _meta.
func (c *conn) stamp(params, caps json.RawMessage) json.RawMessage {
	e := c.era.Load()
	if e == nil {
		return params
	}
	return e.stamp(params, caps, c.level())
}

// subscription serves resources/subscribe and resources/unsubscribe for a
// backend of the per-request era, which has neither: a subscription is a
// subscriptions/listen of its own for the URI, which unsubscribe cancels.
func (b *backend) subscription(c *conn, method string, params json.RawMessage) (json.RawMessage, error) {
	uri, ok := wire.Unquote(wire.Member(params, "uri"))
	if !ok {
		return nil, &RPCError{Server: b.cfg.Name, Code: -32602, Message: "uri must be a string"}
	}
	c.mu.Lock()
	cancel, subscribed := c.subs[uri]
	if method == "resources/unsubscribe" {
		delete(c.subs, uri)
	}
	c.mu.Unlock()
	if method == "resources/unsubscribe" {
		if subscribed {
			cancel(nil)
		}
		return json.RawMessage(`{}`), nil
	}
	if subscribed {
		return json.RawMessage(`{}`), nil
	}
	p, _ := json.Marshal(map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{uri}}})
	cancel = c.Start("subscriptions/listen", p, rpcconn.CallOptions{}, func(_ json.RawMessage, err error) {
		if err != nil && c.Context().Err() == nil {
			b.log.Debug("a resource subscription's listen ended", "uri", uri, "err", err)
		}
	})
	c.mu.Lock()
	if c.subs == nil {
		c.subs = make(map[string]CancelFunc)
	}
	c.subs[uri] = cancel
	c.mu.Unlock()
	return json.RawMessage(`{}`), nil
}
