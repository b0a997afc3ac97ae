package gateway

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// The trace context of a POST's headers goes into each request's _meta in
// the decoded message the front carries to the session (traceHeaders): what
// the session reads of it is what decoding the rewritten request would give,
// whatever shape its params and _meta had.
func TestTraceHeadersAsDecoded(t *testing.T) {
	h := http.Header{}
	h.Set(metaTraceparent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	h.Set(metaTracestate, "k=v")
	const v = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	for _, params := range []string{
		``,
		`,"params":null`,
		`,"params":{}`,
		`,"params":{"name":"t","arguments":{"a":1}}`,
		`,"params":{"_meta":null,"name":"t"}`,
		`,"params":{"_meta":{` + v + `},"name":"t","arguments":{}}`,
		`,"params":{"name":"t","_meta":{` + v + `},"task":{},"_meta":{"x":1},"arguments":{}}`,
		`,"params":{"_meta":{"traceparent":"00-11111111111111111111111111111111-2222222222222222-01"},"name":"t"}`,
		`,"params":{"_meta":7,"name":"t"}`,
		`,"params":[1]`,
	} {
		msgs := []inMsg{readMsg([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"` + params + `}`))}
		traceHeaders(h, msgs)
		got := msgs[0]
		want := readMsg(wire.AppendRequest(nil, got.ID, got.Method, got.Params))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("params %s: carried\n%+v\nwant as decoded\n%+v", params, got, want)
		}
	}
}
