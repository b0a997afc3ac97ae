package wire

import "testing"

// A version's era is decided by the date it names: every revision from
// 2026-07-28 on has no handshake, and a request without a version (or a
// version before it) is of the handshake era.
func TestEraOf(t *testing.T) {
	for v, want := range map[string]Era{
		"":           HandshakeEra,
		"2024-11-05": HandshakeEra,
		"2025-11-25": HandshakeEra,
		"2026-07-28": PerRequestEra,
		"2027-01-01": PerRequestEra,
	} {
		if got := EraOf(v); got != want {
			t.Errorf("EraOf(%q) = %v, want %v", v, got, want)
		}
	}
	if HandshakeEra.String() != "handshake" || PerRequestEra.String() != "per-request" {
		t.Errorf("names %q, %q", HandshakeEra, PerRequestEra)
	}
}
