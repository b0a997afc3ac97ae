package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway serves both eras of MCP (docs/transparency.md, "Protocol
// versions"): up to 2025-11-25 a connection starts with the initialize
// handshake and the session keeps what it said; from 2026-07-28 there is
// no handshake, and every request names its version, the client's
// capabilities and (optionally) the client in its _meta. Which era a
// request belongs to is decided per request, as the 2026-07-28 revision
// says: by its _meta.

// servedVersions are the protocol versions the gateway serves: every
// revision go-sdk knows, oldest first. Computed once (every request of the
// per-request era checks its version against them); callers must not modify
// the slice.
var servedVersions = sync.OnceValue(func() []string {
	v := slices.Clone(mcp.SupportedProtocolVersions())
	slices.Sort(v)
	return v
})

// handshakeVersions are the served versions that start with initialize.
var handshakeVersions = sync.OnceValue(func() []string {
	return slices.DeleteFunc(slices.Clone(servedVersions()), func(v string) bool { return wire.EraOf(v) == wire.PerRequestEra })
})

// negotiate picks the version initialize answers with: the client's, if
// the gateway serves it with a handshake, else the latest it does (the
// client may then end the session), as go-sdk negotiates.
func negotiate(requested string) string {
	served := handshakeVersions()
	if slices.Contains(served, requested) {
		return requested
	}
	return served[len(served)-1]
}

// The keys of _meta that 2026-07-28 defines (go-sdk has the constants).
const (
	metaProtocolVersion = mcp.MetaKeyProtocolVersion
	metaClientCaps      = mcp.MetaKeyClientCapabilities
	metaClientInfo      = mcp.MetaKeyClientInfo
	metaLogLevel        = mcp.MetaKeyLogLevel //lint:ignore SA1019 logging is deprecated from 2026-07-28 on, but clients and backends still use it: the gateway forwards it while they do
	metaServerInfo      = mcp.MetaKeyServerInfo
	metaSubscriptionID  = mcp.MetaKeySubscriptionID
)

// JSON-RPC error codes of 2026-07-28.
const (
	codeHeaderMismatch     = mcp.CodeHeaderMismatch
	codeMissingClientCap   = mcp.CodeMissingRequiredClientCapabilities
	codeUnsupportedVersion = mcp.CodeUnsupportedProtocolVersion
)

// reqMeta is a request's era and, for one of the per-request era, what its
// _meta says about its client (the zero reqMeta: the handshake era).
type reqMeta struct {
	era     wire.Era
	version string
	// caps is the clientCapabilities object, compacted once here: every
	// backend request made for the call carries it as it is.
	caps     json.RawMessage
	client   string // clientInfo.name, if given
	logLevel string // io.modelcontextprotocol/logLevel, if given
}

// eraMeta reads the era of a request and, for one of the per-request era
// (a protocol version of 2026-07-28 or later in _meta), its _meta; err is
// set for one whose _meta is incomplete (-32602) or names a version the
// gateway does not serve (-32022, with the versions it does).
func (in *inMsg) eraMeta() (m reqMeta, err *jsonrpc.Error) {
	v := in.version
	if wire.EraOf(v) == wire.HandshakeEra {
		return m, nil
	}
	m.era, m.version = wire.PerRequestEra, v
	if !slices.Contains(servedVersions(), v) {
		return m, errUnsupportedVersion(v)
	}
	caps := bytes.TrimSpace(wire.Member(in.meta, metaClientCaps))
	if len(caps) > 0 && caps[0] == '{' {
		m.caps, _ = wire.Compact(caps) // valid JSON: the message was
	}
	if m.caps == nil {
		return m, errInvalidParams(`missing or invalid _meta field "` + metaClientCaps + `"`)
	}
	if info := wire.Member(in.meta, metaClientInfo); info != nil {
		var impl mcp.Implementation
		if err := json.Unmarshal(info, &impl); err != nil {
			return m, errInvalidParams(`invalid _meta field "` + metaClientInfo + `"`)
		}
		m.client = impl.Name
	}
	m.logLevel, _ = wire.Unquote(wire.Member(in.meta, metaLogLevel))
	return m, nil
}

// errUnsupportedVersion answers a request of a version the gateway does
// not serve, with the versions it does.
func errUnsupportedVersion(requested string) *jsonrpc.Error {
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: servedVersions(), Requested: requested})
	return &jsonrpc.Error{Code: codeUnsupportedVersion, Message: "unsupported protocol version", Data: data}
}

// newerFields are the result members of 2026-07-28 that a session of an
// earlier revision does not know: a backend's results carry them when it
// speaks 2026-07-28, or when go-sdk adds them.
var newerFields = []string{"ttlMs", "cacheScope", "resultType"}

// dropNewerFields returns result without newerFields and without the
// serverInfo a backend of 2026-07-28 puts in _meta (an _meta left empty
// goes too), its other members in their order. Results without them are
// returned as they are.
func dropNewerFields(result json.RawMessage) json.RawMessage {
	if !bytes.Contains(result, []byte(`"ttlMs"`)) && !bytes.Contains(result, []byte(`"cacheScope"`)) &&
		!bytes.Contains(result, []byte(`"resultType"`)) && !bytes.Contains(result, []byte(metaServerInfo)) {
		return result
	}
	out := make([]byte, 0, len(result))
	out = append(out, '{')
	err := wire.EachMember(result, func(name string, value json.RawMessage) {
		if slices.Contains(newerFields, name) {
			return
		}
		if name == "_meta" && wire.Member(value, metaServerInfo) != nil {
			if v, err := wire.SetMember(value, metaServerInfo, nil); err == nil {
				if string(v) == "{}" {
					return
				}
				value = v
			}
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := json.Marshal(name)
		out = append(append(append(out, key...), ':'), value...)
	})
	if err != nil {
		return result
	}
	return append(out, '}')
}
