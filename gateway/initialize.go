package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// The answer to a client's initialize is go-sdk's (it negotiates the
// version and keeps the session's state), completed by the session with
// what the backends answered to theirs: the union of their capabilities
// and their instructions, each under its server's name. The route
// middleware holds initialize until the backends have answered theirs,
// within the startup timeout (front.route), and the backends are told the
// client's own capabilities first (backends.Manager.SetClientCapabilities).

// unionCap reports whether a capability a backend declares is added to the
// gateway's: those whose requests and notifications the gateway routes.
// Anything else a backend declares (experimental features, say) the
// gateway could not serve, so it is not declared to the client.
func unionCap(name string) bool {
	switch name {
	case "tools", "prompts", "resources", "completions", "logging", "tasks":
		return true
	}
	return false
}

// initializeResult completes go-sdk's initialize result with the ready
// backends' capabilities and instructions.
func (g *Gateway) initializeResult(result json.RawMessage) json.RawMessage {
	b := g.opts.Backends
	if b == nil {
		return result
	}
	caps := wire.Member(result, "capabilities")
	if caps == nil {
		caps = json.RawMessage(`{}`)
	}
	var text []string
	if s, ok := wire.Unquote(wire.Member(result, "instructions")); ok && s != "" {
		text = append(text, s)
	}
	for _, in := range b.Initialized() {
		_ = wire.EachMember(in.Capabilities, func(name string, v json.RawMessage) {
			if unionCap(name) {
				caps = mergeMember(caps, name, v)
			}
		})
		if s := strings.TrimSpace(in.Instructions); s != "" {
			text = append(text, "## "+in.Server+"\n\n"+s)
		}
	}
	out, err := wire.SetMember(result, "capabilities", caps)
	if err != nil {
		return result
	}
	if len(text) > 0 {
		quoted, _ := marshalResult(strings.Join(text, "\n\n"))
		if o, err := wire.SetMember(out, "instructions", quoted); err == nil {
			out = o
		}
	}
	return out
}

// mergeMember returns obj with v merged into its member name: objects are
// merged member by member, true wins over false, and otherwise what obj
// has stays.
func mergeMember(obj json.RawMessage, name string, v json.RawMessage) json.RawMessage {
	cur := wire.Member(obj, name)
	var merged json.RawMessage
	switch {
	case cur == nil:
		merged = v
	case isObject(cur) && isObject(v):
		merged = cur
		_ = wire.EachMember(v, func(k string, kv json.RawMessage) { merged = mergeMember(merged, k, kv) })
	case string(bytes.TrimSpace(v)) == "true":
		merged = v
	default:
		return obj
	}
	out, err := wire.SetMember(obj, name, merged)
	if err != nil {
		return obj
	}
	return out
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}
