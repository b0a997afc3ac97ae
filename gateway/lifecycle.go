package gateway

//lint:file-ignore SA1019 logging/setLevel and resources/subscribe belong to the handshake era, which the gateway serves beside 2026-07-28.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The lifecycle of a client connection, in both eras, is the session's
// own: initialize (and its negotiation), ping, logging/setLevel and
// resources/subscribe belong to the handshake era; server/discover and
// subscriptions/listen (listen.go) to the per-request era, where every
// request says who the client is (versions.go). go-sdk provides the types;
// nothing of a connection is kept anywhere but in its front and session.

// Methods of the per-request era.
const (
	methodDiscover    = "server/discover"
	methodListen      = "subscriptions/listen"
	methodTasksUpdate = "tasks/update" // the tasks extension's (tasks.go)
)

// handshakeOnly are the methods 2026-07-28 removed: a request of that era
// gets -32601 for them, as go-sdk answers. tasks/result and tasks/list are
// 2025-11-25's tasks, which the tasks extension of 2026-07-28 replaced
// (tasks.go).
var handshakeOnly = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"tasks/result": true, "tasks/list": true,
}

// perRequestOnly are the methods only 2026-07-28 has: a request of the
// handshake era gets -32601 for them.
var perRequestOnly = map[string]bool{methodDiscover: true, methodListen: true, methodTasksUpdate: true}

// refuse says why method cannot be served in the request's era, or nil.
func (f *front) refuse(method string, era wire.Era) *jsonrpc.Error {
	perRequest := era == wire.PerRequestEra
	switch {
	case perRequest && handshakeOnly[method]:
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%q is not supported in protocol version %s and later", method, wire.PerRequestVersion)}
	case !perRequest && perRequestOnly[method]:
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%q is only supported in protocol version %s and later", method, wire.PerRequestVersion)}
	case perRequest || method == "initialize" || method == "ping":
		return nil
	}
	if !f.initialized.Load() {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("method %q is invalid during session initialization", method)}
	}
	if f.issuer != "" && (method == "resources/subscribe" || method == "resources/unsubscribe") {
		// A subscription's updates go to the standalone stream, which
		// only the issuing replica serves.
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("%s needs the replica that issued this session (%q): its updates go to that replica's GET stream; send the session's requests there (route on the Mcp-Session-Id before its first dot, docs/deploy.md)", method, f.issuer)}
	}
	return nil
}

// errMethodNotFound answers a method the gateway does not serve.
func errMethodNotFound(method string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", method)}
}

// serverInfo is the gateway's Implementation.
func (g *Gateway) serverInfo() *mcp.Implementation {
	return &mcp.Implementation{Name: "mcp-gateway", Version: g.opts.Version}
}

// ownCapabilities are what the gateway declares whatever its backends do:
// backends come and go (a reload, a late start), so every list may change
// and is declared with listChanged; subscriptions, completion and logging
// are routed to whichever backend serves them.
const ownCapabilities = `{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`

// initialize answers the handshake: the version negotiated as go-sdk
// does, the gateway's capabilities and instructions completed with what
// the backends answered to theirs (initialize.go). The backends waiting
// for the client (stdio) are told its capabilities first, and a backend
// never seen before is waited for, briefly (waitFirstStarts).
func (s *session) initialize(m *inMsg) {
	id, params := m.ID, m.Params
	f := s.f
	var p struct {
		ProtocolVersion string              `json:"protocolVersion"`
		Capabilities    json.RawMessage     `json:"capabilities"`
		ClientInfo      *mcp.Implementation `json:"clientInfo"`
	}
	if err := checkParams(params); err != nil {
		s.writeError(id, err.(*jsonrpc.Error))
		return
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		s.writeError(id, errInvalidParams(decodeReason(err.Error())))
		return
	}
	if !f.initialized.CompareAndSwap(false, true) {
		s.writeError(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `duplicate "initialize" received`})
		return
	}
	version := negotiate(p.ProtocolVersion)
	client := ""
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name
	}
	caps := wire.Member(params, "capabilities")
	f.identify(client, caps, version)
	// Backends waiting for the client are told what it can do.
	f.g.opts.Backends.SetClientCapabilities(caps, wire.HandshakeEra)
	c, ok := s.claim(m, reqMeta{})
	if !ok {
		return
	}
	ctx, cancel := s.callContext(nil)
	// Nothing else is read until initialize is answered: a client may
	// send its first calls right behind it, and they are served as of an
	// initialized session.
	defer cancel(nil)
	if !f.g.lazy() {
		f.g.waitFirstStarts(ctx, f.upstream())
	}
	result := f.g.initializeResult(version, f.grant().access)
	s.respond(c, result, nil)
	if f.sealed {
		// Its client may list on any replica: the tables are built now,
		// so that a change to them is told on this replica's stream
		// (front.changed) whether or not the client lists here.
		f.rebuild(ctx, ifNone)
	}
}

// discover answers server/discover: the versions served, and the same
// capabilities and instructions initialize has (and the tasks extension,
// initializeResult), not to be cached (ttlMs 0: a reload or a backend's
// start changes them), and the same for every client unless a policy
// leaves some servers' instructions out for this one (cacheScope
// private).
func (f *front) discover(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	if !f.g.lazy() {
		f.g.waitFirstStarts(ctx, f.upstream())
	}
	access := f.grant().access
	init := f.g.initializeResult("", access)
	out := json.RawMessage(`{}`)
	versions, _ := json.Marshal(servedVersions())
	out, _ = wire.SetMember(out, "supportedVersions", versions)
	out, _ = wire.SetMember(out, "capabilities", wire.Member(init, "capabilities"))
	if in := wire.Member(init, "instructions"); in != nil {
		out, _ = wire.SetMember(out, "instructions", in)
	}
	out, _ = wire.SetMember(out, "ttlMs", json.RawMessage(`0`))
	scope := json.RawMessage(`"public"`)
	if access != nil {
		scope = json.RawMessage(`"private"`)
	}
	out, _ = wire.SetMember(out, "cacheScope", scope)
	return out, nil
}

// setLevel serves logging/setLevel: the level goes to the backends that
// log (backends.Manager.SetLogLevel).
func (f *front) setLevel(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	level, ok := wire.Unquote(wire.Member(params, "level"))
	if !ok || level == "" {
		return nil, errInvalidParams("level must be a string")
	}
	f.g.opts.Backends.SetLogLevel(ctx, level)
	return json.RawMessage(`{}`), nil
}

// subscription serves resources/subscribe and resources/unsubscribe.
func (f *front) subscription(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	uri, ok := wire.Unquote(wire.Member(params, "uri"))
	if !ok {
		return nil, errInvalidParams("uri must be a string")
	}
	var err error
	if method == "resources/subscribe" {
		err = f.subscribe(ctx, uri)
	} else {
		err = f.unsubscribe(ctx, uri)
	}
	if err != nil {
		return nil, err
	}
	return json.RawMessage(`{}`), nil
}

// result is a request's result as the client's era wants it: for a
// request of the per-request era, with its resultType (complete, unless a
// backend's says it needs input) and the gateway's serverInfo in _meta
// (a backend's own is replaced);
// for one of the handshake era, without the members of the per-request era
// a backend that speaks it may have added.
func (f *front) result(result json.RawMessage, era wire.Era) json.RawMessage {
	if era == wire.HandshakeEra {
		return dropNewerFields(result)
	}
	out := result
	if wire.Member(out, "resultType") == nil {
		if o, err := wire.SetMember(out, "resultType", json.RawMessage(`"complete"`)); err == nil {
			out = o
		}
	}
	// The server the client talks to is the gateway, whatever backend
	// answered: its serverInfo replaces a backend's.
	if m, err := wire.SetMember(orEmpty(wire.Member(out, "_meta")), metaServerInfo, f.g.serverInfoJSON); err == nil {
		if o, err := wire.SetMember(out, "_meta", m); err == nil {
			out = o
		}
	}
	return out
}

// orEmpty is params, or {} for none.
func orEmpty(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || string(params) == "null" {
		return json.RawMessage(`{}`)
	}
	return params
}
