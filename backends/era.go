package backends

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A backend is spoken to in the newest revision it offers: the gateway
// asks server/discover first, and a backend that names 2026-07-28 among
// its versions gets no handshake — every request carries the protocol
// version, the client's capabilities and the gateway's identity in _meta
// (stamp), list changes arrive on a subscriptions/listen the gateway keeps
// open, and a resource subscription is a listen of its own. A refusal of
// the version (-32022) that names 2026-07-28 among the supported ones is
// asked again once. A backend that does not know server/discover (it
// answers an error, nothing within discoverTimeout, or exits) gets
// initialize with 2025-11-25, as before; one that exited is not asked
// again while the gateway runs.

// The _meta keys of 2026-07-28 (go-sdk has the constants).
const (
	metaVersion = mcp.MetaKeyProtocolVersion
	metaCaps    = mcp.MetaKeyClientCapabilities
	metaInfo    = mcp.MetaKeyClientInfo
	metaLevel   = mcp.MetaKeyLogLevel //lint:ignore SA1019 logging is deprecated from 2026-07-28 on, but clients and backends still use it: the gateway forwards it while they do
)

// requestMeta is what every request's _meta says to a backend of the
// per-request era (wire.PerRequestEra); a session of the handshake era
// has none (conn.era is nil).
type requestMeta struct {
	version json.RawMessage // as JSON: a string
	caps    json.RawMessage // the capabilities declared for the client, unless a call names its own
	info    json.RawMessage // the gateway's Implementation
}

// stamp returns params (an object, or nil for none) with the _meta keys of
// the era: the version, the client's capabilities (caps, if given, else
// the era's), the gateway's identity, and the log level (if set). Keys the
// params' own _meta has stay as they are.
func (e *requestMeta) stamp(params, caps json.RawMessage, level string) json.RawMessage {
	if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	meta := wire.Member(params, "_meta")
	if len(meta) == 0 || string(meta) == "null" {
		meta = json.RawMessage(`{}`)
	}
	if caps == nil {
		caps = e.caps
	}
	set := func(key string, v json.RawMessage) {
		if wire.Member(meta, key) == nil {
			if m, err := wire.SetMember(meta, key, v); err == nil {
				meta = m
			}
		}
	}
	set(metaVersion, e.version)
	set(metaCaps, caps)
	set(metaInfo, e.info)
	if level != "" {
		l, _ := json.Marshal(level)
		set(metaLevel, l)
	}
	if out, err := wire.SetMember(params, "_meta", meta); err == nil {
		return out
	}
	return params
}

// offersPerRequest reports whether a server/discover result names the
// revision of the per-request era the gateway speaks.
func offersPerRequest(result json.RawMessage) bool {
	var r struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	return json.Unmarshal(result, &r) == nil && slices.Contains(r.SupportedVersions, wire.PerRequestVersion)
}

// exited reports whether a session's end reason is its process's exit, as
// os.ProcessState words it ("exit status 1", "signal: killed"), rather
// than a stream closed under a process still running.
func exited(reason string) bool {
	return strings.HasPrefix(reason, "exit status ") || strings.HasPrefix(reason, "signal: ")
}
