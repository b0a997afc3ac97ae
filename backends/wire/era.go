package wire

// MCP has two eras, and every request belongs to one of them. Both the
// gateway's clients and its backends may speak either; which one a
// request is of is the request's own to say (its _meta), not the
// connection's.

// Era is the protocol era a request, a client or a backend speaks.
type Era uint8

const (
	// HandshakeEra is MCP up to 2025-11-25: a session starts with the
	// initialize handshake, and what the client said there holds for
	// every later request.
	HandshakeEra Era = iota
	// PerRequestEra is MCP from 2026-07-28 on: no handshake; every
	// request names its protocol version, the client's capabilities and
	// (optionally) the client in its _meta.
	PerRequestEra
)

// PerRequestVersion is the first protocol version of the per-request era.
const PerRequestVersion = "2026-07-28"

// EraOf returns the era of a protocol version ("" for none is the
// handshake era's). Versions are dates, so they compare as strings.
func EraOf(version string) Era {
	if version >= PerRequestVersion {
		return PerRequestEra
	}
	return HandshakeEra
}

// String names the era as the documentation does.
func (e Era) String() string {
	if e == PerRequestEra {
		return "per-request"
	}
	return "handshake"
}
