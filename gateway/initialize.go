package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
)

// The answer to a client's initialize (and to server/discover) holds the
// gateway's own capabilities completed with what the backends answered to
// theirs — live, or as their snapshots say while they start: the union of
// their capabilities and their instructions, each under its server's name.
// The backends are told the client's own capabilities first
// (backends.Manager.SetClientCapabilities).

// unionCap reports whether a capability a backend declares is added to the
// gateway's: those whose requests and notifications the gateway routes.
// Anything else a backend declares (experimental features, say) the
// gateway could not serve, so it is not declared to the client; of the
// extensions, MCP Apps' is (apps.go), and to server/discover the tasks
// extension of 2026-07-28 (tasks.go).
func unionCap(name string) bool {
	switch name {
	case "tools", "prompts", "resources", "completions", "logging", "tasks":
		return true
	}
	return false
}

// initializeResult is the answer to initialize at version, or, when
// version is "", to server/discover: the gateway's capabilities and the
// backends', the instructions of those the caller's decision (access, nil:
// all) lets it see, and the gateway's serverInfo. The tasks extension is
// declared to server/discover only: it is negotiated per request, which
// the handshake era has no way to do, and that era has tasks of its own
// (the tasks capability).
func (g *Gateway) initializeResult(version string, access *policy.Decision) json.RawMessage {
	caps := json.RawMessage(ownCapabilities)
	var text []string
	for _, in := range g.opts.Backends.Initialized() {
		_ = wire.EachMember(in.Capabilities, func(name string, v json.RawMessage) {
			switch {
			case unionCap(name):
				caps = mergeMember(caps, name, v)
			case name == "extensions":
				// Of the extensions, those the gateway serves: MCP
				// Apps' (apps.go) and the tasks extension (tasks.go).
				// It cannot route another's methods.
				if ui := wire.Member(v, backends.AppsExtension); ui != nil {
					ext, _ := wire.SetMember(json.RawMessage(`{}`), backends.AppsExtension, ui)
					caps = mergeMember(caps, name, ext)
				}
				if t := wire.Member(v, backends.TasksExtension); t != nil && version == "" {
					ext, _ := wire.SetMember(json.RawMessage(`{}`), backends.TasksExtension, t)
					caps = mergeMember(caps, name, ext)
				}
			}
		})
		if s := strings.TrimSpace(in.Instructions); s != "" && access.AllowsServer(in.Server) {
			text = append(text, "## "+in.Server+"\n\n"+s)
		}
	}
	out, _ := wire.SetMember(json.RawMessage(`{}`), "capabilities", caps)
	if len(text) > 0 {
		quoted, _ := wire.Marshal(strings.Join(text, "\n\n"))
		out, _ = wire.SetMember(out, "instructions", quoted)
	}
	if version != "" {
		v, _ := json.Marshal(version)
		out, _ = wire.SetMember(out, "protocolVersion", v)
		info, _ := wire.Marshal(g.serverInfo())
		out, _ = wire.SetMember(out, "serverInfo", info)
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
