package backends

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/flush"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/rpcconn"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/trust"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// SetHooks sets the Manager's hooks. It must be called before Start, once:
// gateway.New does.
func (m *Manager) SetHooks(h Hooks) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		panic("backends: SetHooks after Start")
	}
	m.hooks = h
}

// FlushWrites writes the requests StartToolCall held (CallOptions.Batch),
// each backend's in one write when its pipe has room. It touches only the
// backends that hold something: a backend marks itself when it starts
// holding (flush.Set).
func (m *Manager) FlushWrites() { m.held.Flush() }

// ReadIdle is what the backends' read loops flush each time they have
// handled all they read. A writer above that holds back what a read loop
// gave it — a call's done (StartToolCall), its progress, a Notification —
// so that a burst goes out in one write marks itself in it when it starts
// holding, and is flushed at the end of the burst; nothing else is.
func (m *Manager) ReadIdle() *flush.Set { return &m.readIdle }

// StartToolCall starts a call of a backend's tool and returns at once,
// without ever blocking on the backend (a backend that stopped reading gets
// its request queued). done receives the backend's raw result — valid only
// while done runs: done copies what it keeps — or the error (*ServerError,
// *TimeoutError, *RPCError, or context.Canceled after cancel), exactly
// once. done may run before StartToolCall returns, in the backend's read
// loop or on a timer's goroutine, so it must not block for long; progress
// (opts.Progress) runs in the read loop too, always before done. cancel
// ends the call with context.Canceled and sends the backend
// notifications/cancelled; after the call ended it does nothing.
func (m *Manager) StartToolCall(server, tool string, args json.RawMessage, opts CallOptions, done func(json.RawMessage, error)) (cancel CancelFunc) {
	b := m.set.Load().byName[server]
	if b == nil {
		done(nil, &ServerError{Server: server, Reason: "no such server"})
		return func(json.RawMessage) {}
	}
	if !toolAllowed(b.cfg.Tools, tool) {
		// The filter is on the name itself: a call of an excluded tool
		// is refused whatever the server's state, never waits for it.
		done(nil, &NotListedError{Server: server, Tool: tool})
		return func(json.RawMessage) {}
	}
	if b.pool != nil {
		// A caller's own session: at once when it is ready, else once
		// the caller's credential and session are.
		if cb := b.pool.ready(opts.Caller); cb != nil {
			if c, err := cb.readyConn(); err == nil {
				return cb.startCall(c, tool, args, opts, cb.timeout, cb.upstream.explain(done))
			}
		}
		return b.startWhenReady(tool, args, opts, done)
	}
	c, err := b.readyConn()
	switch {
	case err == nil:
		return b.startCall(c, tool, args, opts, b.timeout, done)
	case b.isStarting():
		return b.startWhenReady(tool, args, opts, done)
	}
	done(nil, err)
	return func(json.RawMessage) {}
}

// awaitSession is awaitConn of the session a request of opts is made on:
// b's own, or, for a server reached per caller, the caller's (made when
// the caller has none), with its backend.
func (b *backend) awaitSession(ctx context.Context, deadline time.Time, opts CallOptions, method, name string) (*backend, *conn, error) {
	if b.pool == nil {
		c, err := b.awaitConn(ctx, deadline, method, name)
		return b, c, err
	}
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	cb, err := b.pool.acquire(ctx, opts.Caller)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && !deadline.IsZero() && !time.Now().Before(deadline) {
			return nil, nil, &TimeoutError{Server: b.cfg.Name, Method: method, Name: name, Timeout: b.timeout, Starting: true}
		}
		return nil, nil, err
	}
	c, err := cb.awaitConn(ctx, deadline, method, name)
	return cb, c, err
}

// startCall starts a tools/call on c, b's session, bounded by timeout.
func (b *backend) startCall(c *conn, tool string, args json.RawMessage, opts CallOptions, timeout time.Duration, done func(json.RawMessage, error)) CancelFunc {
	if err := b.callable(c, tool); err != nil {
		done(nil, err)
		return func(json.RawMessage) {}
	}
	o := rpcconn.CallOptions{Timeout: timeout, Caps: opts.ClientCaps}
	if opts.Batch {
		o.Batch = &b.m.held
	}
	buf := b.m.params.Get()
	defer b.m.params.Put(buf) // Start has sent the request when it returns
	params, err := b.m.appendToolParams(*buf, tool, args, opts, &o)
	*buf = params
	if err != nil {
		done(nil, fmt.Errorf("call %s/%s: %w", b.cfg.Name, tool, err))
		return func(json.RawMessage) {}
	}
	return c.Start("tools/call", params, o, func(res json.RawMessage, err error) {
		done(res, b.callError(err, "tools/call", tool))
	})
}

// startWhenReady is StartToolCall for a backend still starting: a
// goroutine of the call's own waits for the backend to be ready and then
// starts the call, both within the call's timeout (awaitConn). A start
// that fails fails the call at once, with the backend's error.
func (b *backend) startWhenReady(tool string, args json.RawMessage, opts CallOptions, done func(json.RawMessage, error)) CancelFunc {
	deadline := time.Now().Add(b.timeout)
	ctx, stop := context.WithCancel(context.Background())
	var (
		mu        sync.Mutex
		cancelled bool
		inner     CancelFunc // the call's, once started
	)
	go func() {
		defer stop()
		sb, c, err := b.awaitSession(ctx, deadline, opts, "tools/call", tool)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case cancelled:
			done(nil, context.Canceled)
		case err != nil:
			done(nil, err)
		default:
			opts.Batch = false // nobody flushes for it: it starts on its own
			inner = sb.startCall(c, tool, args, opts, max(time.Until(deadline), time.Millisecond), done)
		}
	}()
	return func(reason json.RawMessage) {
		mu.Lock()
		if inner != nil {
			mu.Unlock()
			inner(reason)
			return
		}
		cancelled = true
		mu.Unlock()
		stop()
	}
}

// appendToolParams appends tools/call params to buf: the name, the
// arguments as given (compacted), the task (if any), and _meta. On error
// it returns buf as it got it, with the error.
func (m *Manager) appendToolParams(buf []byte, tool string, args json.RawMessage, opts CallOptions, o *rpcconn.CallOptions) ([]byte, error) {
	in := buf
	buf = append(buf, `{"name":`...)
	buf = wire.AppendString(buf, tool)
	if len(bytes.TrimSpace(args)) > 0 {
		a, err := wire.Compact(args)
		if err != nil {
			return in, fmt.Errorf("arguments: %w", err)
		}
		buf = append(append(buf, `,"arguments":`...), a...)
	}
	if len(opts.Task) > 0 {
		task, err := wire.Compact(opts.Task)
		if err != nil {
			return in, fmt.Errorf("task: %w", err)
		}
		buf = append(append(buf, `,"task":`...), task...)
	}
	if len(opts.Extra) > 0 {
		var werr error
		err := wire.EachMember(opts.Extra, func(name string, v json.RawMessage) {
			if werr == nil {
				buf = wire.AppendString(append(buf, ','), name)
				if v, werr = wire.Compact(v); werr == nil {
					buf = append(append(buf, ':'), v...)
				}
			}
		})
		if err = cmp.Or(err, werr); err != nil {
			return in, fmt.Errorf("params: %w", err)
		}
	}
	if opts.Progress != nil || len(opts.Meta) > 0 {
		meta, err := m.meta(nil, opts, o)
		if err != nil {
			return in, fmt.Errorf("_meta: %w", err)
		}
		buf = append(append(buf, `,"_meta":`...), meta...)
	}
	return append(buf, '}'), nil
}

// callable returns the error of a call of b's tool on c, b's session: the
// tool is withheld, or c's live list does not have it. Only a tool the
// server lists now is called: what a snapshot showed while it started, or
// a name routed by its prefix alone, may not be.
func (b *backend) callable(c *conn, tool string) error {
	if err := b.withheld(trust.Tool, tool); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == c && !b.live.lists.listed[tool] {
		return &NotListedError{Server: b.cfg.Name, Tool: tool}
	}
	return nil // a session since replaced: the call fails as its conn does
}

// Live reports whether server is ready: the lists shown of it are its own,
// not its snapshot's.
func (m *Manager) Live(server string) bool {
	b := m.set.Load().byName[server]
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == Ready
}

// AwaitLive waits, as a call of server's tool by caller would (within the
// server's timeout), until server is ready, and returns the error such a
// call would fail with otherwise: its failed start, a *TimeoutError saying
// it is still starting, or ctx's. For a server reached per caller, it is
// the caller's session that is waited for (made if need be), and a caller
// without a credential gets its error.
func (m *Manager) AwaitLive(ctx context.Context, server, tool string, caller *Caller) error {
	b := m.set.Load().byName[server]
	if b == nil {
		return &ServerError{Server: server, Reason: "no such server"}
	}
	_, _, err := b.awaitSession(ctx, time.Now().Add(b.timeout), CallOptions{Caller: caller}, "tools/call", tool)
	return err
}

// Excludes reports whether server's tools filter leaves tool out: no call
// of it is forwarded.
func (m *Manager) Excludes(server, tool string) bool {
	b := m.set.Load().byName[server]
	return b != nil && !toolAllowed(b.cfg.Tools, tool)
}
