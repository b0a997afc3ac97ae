package gateway

import (
	"testing"
)

// BenchmarkReadToolCall is the reading of one client tools/call, as the
// session does it before the call starts: the message decoded and checked
// (readMsg), then its params read (decodeToolCall). Its arguments are
// those of cmd/mcp-gateway's benchmarks.
func BenchmarkReadToolCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"tb0.echo","arguments":{"text":"hello","n":12345678901234567890123},"_meta":{"progressToken":"p-1"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		m := readMsg(msg)
		if m.bad != nil || m.ambiguous != nil {
			b.Fatal(m.bad, m.ambiguous)
		}
		if _, err := decodeToolCall(&m); err != nil {
			b.Fatal(err)
		}
	}
}
