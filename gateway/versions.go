package gateway

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// firstUnserved is the first protocol revision the gateway does not serve
// completely: 2026-07-28 requires resultType in every result and changes
// sampling, elicitation and roots, and the backends' results pass through
// as the 2025-11-25 servers wrote them. See docs/transparency.md.
const firstUnserved = "2026-07-28"

// servedVersions are the protocol versions the gateway negotiates: the
// ones go-sdk supports, up to the last revision served completely.
func servedVersions() []string {
	return slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= firstUnserved })
}

// methodDiscover is 2026-07-28's probe. The gateway answers it as a
// 2025-11-25 server does (method not found), so that a client negotiating
// falls back to initialize, as it does with the backends directly.
const methodDiscover = "server/discover"

var errNoDiscover = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: `method not found: "server/discover"`}

// errUnsupportedVersion answers a request of a revision the gateway does
// not serve (one that skips initialize and names its version in _meta), as
// go-sdk answers the methods it serves.
func errUnsupportedVersion(requested string) *jsonrpc.Error {
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: servedVersions(), Requested: requested})
	return &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "unsupported protocol version", Data: data}
}

// newerFields are the result members go-sdk adds that belong to
// 2026-07-28 (cache control on lists, server/discover and resources/read);
// no session the gateway serves negotiated that revision.
var newerFields = []string{"ttlMs", "cacheScope"}

// dropNewerFields returns result without newerFields, its other members
// in their order. Results without them are returned as they are.
func dropNewerFields(result json.RawMessage) json.RawMessage {
	if !bytes.Contains(result, []byte(`"ttlMs"`)) && !bytes.Contains(result, []byte(`"cacheScope"`)) {
		return result
	}
	out := make([]byte, 0, len(result))
	out = append(out, '{')
	err := wire.EachMember(result, func(name string, value json.RawMessage) {
		if slices.Contains(newerFields, name) {
			return
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
