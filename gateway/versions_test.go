package gateway

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

func TestDropNewerFields(t *testing.T) {
	for in, want := range map[string]string{
		`{"tools":[{"name":"a","ttlMs":1}],"ttlMs":0,"cacheScope":"public","nextCursor":"c"}`: `{"tools":[{"name":"a","ttlMs":1}],"nextCursor":"c"}`,
		`{"contents":[]}`:                   `{"contents":[]}`,
		`{"cacheScope":"public","ttlMs":5}`: `{}`,
		`{"a\u0022":1,"ttlMs":0}`:           `{"a\"":1}`,
		`{"content":[{"type":"text","text":"{\"resultType\":1}"}],"resultType":"complete"}`:      `{"content":[{"type":"text","text":"{\"resultType\":1}"}]}`,
		`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b"}}}`:             `{"content":[]}`,
		`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b"},"trace":"t"}}`: `{"content":[],"_meta":{"trace":"t"}}`,
	} {
		if got := string(dropNewerFields(json.RawMessage(in))); got != want {
			t.Errorf("dropNewerFields(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestVersions(t *testing.T) {
	v, old := servedVersions(), handshakeVersions()
	if !slices.Contains(v, wire.PerRequestVersion) || !slices.Contains(v, "2025-11-25") || !slices.IsSorted(v) {
		t.Errorf("servedVersions() = %v", v)
	}
	if slices.Contains(old, wire.PerRequestVersion) || len(old) != len(v)-1 {
		t.Errorf("handshakeVersions() = %v", old)
	}
	for in, want := range map[string]string{"2025-06-18": "2025-06-18", "2026-07-28": "2025-11-25", "2099-01-01": "2025-11-25", "": "2025-11-25", "x": "2025-11-25"} {
		if got := negotiate(in); got != want {
			t.Errorf("negotiate(%q) = %q, want %q", in, got, want)
		}
	}
}

// A request's _meta decides its era; one of the per-request era must say
// the client's capabilities, and name a version the gateway serves.
func TestEraMeta(t *testing.T) {
	const caps = `"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}`
	for _, c := range []struct {
		params string
		era    wire.Era
		code   int64
	}{
		{`{}`, wire.HandshakeEra, 0},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, wire.HandshakeEra, 0},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `}}`, wire.PerRequestEra, 0},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, wire.PerRequestEra, -32602},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`, wire.PerRequestEra, -32602},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `,"io.modelcontextprotocol/clientInfo":7}}`, wire.PerRequestEra, -32602},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01",` + caps + `}}`, wire.PerRequestEra, -32022},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0",` + caps + `}}`, wire.PerRequestEra, -32022},
	} {
		in := readMsg([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + c.params + `}`))
		m, err := in.eraMeta()
		var code int64
		if err != nil {
			code = err.Code
		}
		if m.era != c.era || code != c.code {
			t.Errorf("eraMeta(%s) = %+v, %v; want era %v, code %d", c.params, m, err, c.era, c.code)
		}
	}
	// The capabilities are compacted once, here: every request made of a
	// backend for the call carries them as they are, on one line.
	in := readMsg([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\n\"io.modelcontextprotocol/clientCapabilities\": {\n  \"sampling\": {},\n  \"roots\": {\"listChanged\": true}\n}}}}"))
	if m, err := in.eraMeta(); err != nil || string(m.caps) != `{"sampling":{},"roots":{"listChanged":true}}` {
		t.Errorf("capabilities %s, %v; want them compacted", m.caps, err)
	}
}
