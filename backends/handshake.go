package backends

// The MCP handshake of a backend's session: what the backend is — a
// server of the per-request era (server/discover, era.go) or of the
// handshake era (initialize) — its capabilities and first lists, and, for
// the per-request era, the subscriptions/listen that brings its list
// changes. runOnce (supervise.go) calls handshake once per session.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/rpcconn"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// discoverTimeout bounds how long a backend has to answer server/discover
// before it is taken for one of the handshake era.
const discoverTimeout = 10 * time.Second

// handshake learns what the backend is — by server/discover, else by
// initialize (era.go) — and fetches the lists, within ctx.
func (b *backend) handshake(ctx context.Context, c *conn) (*surface, error) {
	if b.asksDiscover() {
		sf, ok, err := b.discover(ctx, c)
		if ok {
			return sf, err
		}
	}
	return b.initialize(ctx, c)
}

// asksDiscover reports whether the backend is asked server/discover: by
// its protocol setting; for "auto", unless it ended its session on the
// question before, or it is a remote server on the legacy HTTP+SSE
// transport (older than either era's Streamable HTTP), or — over stdio,
// with one client — the client speaks the handshake era: the backend then
// sees the era the client would show it directly.
func (b *backend) asksDiscover() bool {
	switch {
	case b.cfg.Protocol == "2025-11-25" || b.noDiscover.Load() || b.cfg.URL != "" && useSSE(b.cfg.Transport, b.cfg.URL):
		return false
	case b.cfg.Protocol == "2026-07-28" || !b.m.opts.AwaitClient:
		return true
	}
	c := b.m.client.Load()
	return c != nil && c.era == wire.PerRequestEra
}

// discover asks a backend server/discover: ok reports whether the answer
// settles what it is — it speaks 2026-07-28 (sf), or its session ended on
// the question (err: the start failed, and the next start of a process
// initializes; a remote server is asked again).
// Any other answer, or none in discoverTimeout, leaves initialize to it.
func (b *backend) discover(ctx context.Context, c *conn) (sf *surface, ok bool, err error) {
	info, _ := json.Marshal(b.m.clientInfo())
	e := &requestMeta{version: json.RawMessage(`"` + wire.PerRequestVersion + `"`), caps: b.m.clientCaps(), info: info}
	res, err := c.Call(ctx, "server/discover", e.stamp(nil, nil, ""), rpcconn.CallOptions{Timeout: discoverTimeout})
	if refusedVersion(err) {
		// The version was refused, yet the refusal names it among those
		// supported (a server choosing per request, or one that changed
		// in between): it is asked once more, as the revision says a
		// client retries with a version the refusal names.
		b.log.Debug("server/discover: the version was refused, and named among those supported; asking again")
		res, err = c.Call(ctx, "server/discover", e.stamp(nil, nil, ""), rpcconn.CallOptions{Timeout: discoverTimeout})
	}
	var se *ServerError
	switch {
	case errors.As(err, &se) && b.cfg.URL != "":
		// A remote server's session ends for the transport's reasons (a
		// sign-in refused, a connection lost), not for the question: the
		// next start asks it again.
		return nil, true, b.startError("server/discover", err)
	case errors.As(err, &se):
		// The next start initializes. Whether the question ended the
		// session cannot be told from a process that exited: one that
		// fails whatever it is asked (an npm E404) exits the same way, so
		// only an exit is reported, with its code and stderr, by run.
		b.noDiscover.Store(true)
		if exited(se.Reason) {
			b.log.Debug("the process exited before answering server/discover; its next start is asked initialize (2025-11-25)", "reason", se.Reason)
		} else {
			b.log.Warn("the server ended its session on server/discover; it is spoken to in 2025-11-25 from now on", "reason", se.Reason)
		}
		return nil, true, b.startError("server/discover", err)
	case ctx.Err() != nil:
		return nil, true, b.startError("server/discover", ctx.Err())
	case err != nil || !offersPerRequest(res):
		return nil, false, nil
	}
	var dr struct {
		Capabilities json.RawMessage     `json:"capabilities"`
		Instructions string              `json:"instructions"`
		ServerInfo   *mcp.Implementation `json:"serverInfo"`
		Meta         struct {
			ServerInfo *mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &dr); err != nil {
		return nil, true, b.startError("server/discover", fmt.Errorf("bad result: %w", err))
	}
	caps, err := parseCaps(dr.Capabilities)
	if err != nil {
		return nil, true, b.startError("server/discover", fmt.Errorf("bad result: capabilities: %w", err))
	}
	c.era.Store(e)
	l, err := b.fetch(ctx, c, caps, listAllKinds, rpcconn.CallOptions{})
	if err != nil {
		return nil, true, b.startError("lists", err)
	}
	b.listen(c, dr.Capabilities)
	info2 := dr.Meta.ServerInfo
	if info2 == nil {
		info2 = dr.ServerInfo
	}
	return &surface{
		protocol:     wire.PerRequestVersion,
		serverInfo:   info2,
		caps:         caps,
		capsRaw:      bytes.Clone(dr.Capabilities),
		instructions: b.values.mask(dr.Instructions),
		lists:        l,
	}, true, nil
}

// refusedVersion reports whether err refuses the version of a request of
// the per-request era (-32022) while naming wire.PerRequestVersion among the
// versions the server supports.
func refusedVersion(err error) bool {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeUnsupportedProtocolVersion {
		return false
	}
	var data mcp.UnsupportedProtocolVersionData
	return json.Unmarshal(we.Data, &data) == nil && slices.Contains(data.Supported, wire.PerRequestVersion)
}

// listen asks a backend of the per-request era for its list changes, on a
// subscriptions/listen that lasts as long as the session: they arrive as
// the handshake era's list_changed notifications would (onNotification).
// A listen that ends while the session lasts — a remote server restarted,
// or a proxy between cut the stream — is opened again after a pause that
// grows to relistenMax. Once the server acknowledges a listen, the lists
// it covers are fetched again (onNotification): changes made before it
// was in place — since the first fetch, or while it was cut — were not
// heard.
func (b *backend) listen(c *conn, caps json.RawMessage) {
	want := map[string]bool{}
	for cap, key := range map[string]string{"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"} {
		if string(bytes.TrimSpace(wire.Member(wire.Member(caps, cap), "listChanged"))) == "true" {
			want[key] = true
		}
	}
	if len(want) == 0 {
		return
	}
	params, _ := json.Marshal(map[string]any{"notifications": want})
	pause := relistenMin
	var open func()
	open = func() {
		opened := time.Now()
		c.Start("subscriptions/listen", params, rpcconn.CallOptions{}, func(_ json.RawMessage, err error) {
			if c.Context().Err() != nil {
				return
			}
			b.log.Debug("the backend ended its subscriptions/listen; listening again", "err", err, "after", pause)
			if time.Since(opened) > relistenMax {
				pause = relistenMin // it lasted: a fresh cut, not a refusal
			}
			time.AfterFunc(pause, func() {
				if c.Context().Err() == nil {
					open()
				}
			})
			pause = min(2*pause, relistenMax)
		})
	}
	open()
}

// The pauses before a subscriptions/listen that ended is opened again.
const (
	relistenMin = time.Second
	relistenMax = 30 * time.Second
)

// startError is why a start failed at step: the session's end, the start
// limit, or err itself.
func (b *backend) startError(step string, err error) error {
	var se *ServerError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s: %s", step, se.Reason)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: start timed out after %s (gateway.start_limit_ms)", step, b.m.startLimit)
	}
	return fmt.Errorf("%s: %w", step, err)
}

// initialize initializes a backend of the handshake era.
func (b *backend) initialize(ctx context.Context, c *conn) (*surface, error) {
	step := "initialize"
	fail := func(err error) (*surface, error) { return nil, b.startError(step, err) }
	res, err := c.Call(ctx, "initialize", b.m.initializeParams(), rpcconn.CallOptions{})
	if err != nil {
		return fail(err)
	}
	var ir struct {
		ProtocolVersion string              `json:"protocolVersion"`
		Capabilities    json.RawMessage     `json:"capabilities"`
		ServerInfo      *mcp.Implementation `json:"serverInfo"`
		Instructions    string              `json:"instructions"`
	}
	if err := json.Unmarshal(res, &ir); err != nil {
		return fail(fmt.Errorf("bad result: %w", err))
	}
	caps, err := parseCaps(ir.Capabilities)
	if err != nil {
		return fail(fmt.Errorf("bad result: capabilities: %w", err))
	}
	if ir.ProtocolVersion != protocolVersion {
		b.log.Debug("backend chose another protocol version", "version", ir.ProtocolVersion)
	}
	step = "notifications/initialized"
	if err := c.Notify("notifications/initialized", nil); err != nil {
		return fail(err)
	}
	step = "lists"
	l, err := b.fetch(ctx, c, caps, listAllKinds, rpcconn.CallOptions{})
	if err != nil {
		return fail(err)
	}
	if level := b.m.logLevel.Load(); level != nil && caps.logging {
		// A client's logging/setLevel, sent while this backend was
		// starting (Manager.SetLogLevel).
		params, _ := json.Marshal(map[string]string{"level": *level})
		if _, err := c.Call(ctx, "logging/setLevel", params, rpcconn.CallOptions{Timeout: b.timeout}); err != nil {
			b.log.Debug("logging/setLevel not accepted", "err", err)
		}
	}
	return &surface{
		protocol:     ir.ProtocolVersion,
		serverInfo:   ir.ServerInfo,
		caps:         caps,
		capsRaw:      bytes.Clone(ir.Capabilities),
		instructions: b.values.mask(ir.Instructions),
		lists:        l,
	}, nil
}

// serverCaps are the capabilities of a backend that matter to the gateway.
type serverCaps struct {
	tools, prompts, resources, logging bool
	tasksList                          bool // tasks.list
}

// parseCaps reads the capabilities a backend declared (nil: none).
func parseCaps(raw json.RawMessage) (serverCaps, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return serverCaps{}, nil
	}
	var c struct {
		Tools     json.RawMessage `json:"tools"`
		Prompts   json.RawMessage `json:"prompts"`
		Resources json.RawMessage `json:"resources"`
		Logging   json.RawMessage `json:"logging"`
		Tasks     json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return serverCaps{}, err
	}
	has := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	return serverCaps{
		tools:     has(c.Tools),
		prompts:   has(c.Prompts),
		resources: has(c.Resources),
		logging:   has(c.Logging),
		tasksList: has(wire.Member(c.Tasks, "list")),
	}, nil
}
