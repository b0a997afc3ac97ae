package gateway

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestHeadersGivenOnce: a 2026-07-28 request's Mcp-* headers are there so
// that a proxy can route and filter it without reading the body, so each
// must say one thing. Given twice ("Mcp-Name: tb.echo" then "Mcp-Name:
// tb.crash"), the gateway compared the first with the body while a proxy
// that reads the last, or both (RFC 9110 makes repeated lines one
// comma-separated value, which the gateway refuses when sent so), saw
// another tool: one message, two readings. It is refused -32020.
func TestHeadersGivenOnce(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tb.echo","arguments":{"q":"x"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	schema := func(string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","x-mcp-header":"Q"}}}`)
	}
	base := func() http.Header {
		return http.Header{
			"Mcp-Protocol-Version": {"2026-07-28"},
			"Mcp-Method":           {"tools/call"},
			"Mcp-Name":             {"tb.echo"},
			"Mcp-Param-Q":          {"x"},
		}
	}
	m := readMsg([]byte(body))
	if e := checkHeaders(base(), &m, schema); e != nil {
		t.Fatalf("the headers as sent once: %v", e)
	}
	for _, h := range []string{"Mcp-Name", "Mcp-Method", "Mcp-Protocol-Version", "Mcp-Param-Q"} {
		hdr := base()
		hdr[h] = append(hdr[h], "other")
		m := readMsg([]byte(body))
		if e := checkHeaders(hdr, &m, schema); e == nil || e.Code != codeHeaderMismatch {
			t.Errorf("%s given twice (%q): %v, want -32020", h, hdr[h], e)
		}
	}
}
