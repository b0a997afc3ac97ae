package gateway

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
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

// A request's params' members are kept in order however many there are
// (the first few without an allocation), and setMeta replaces _meta in its
// place, or adds it, keeping the others.
func TestParamList(t *testing.T) {
	names := func(in *inMsg) string {
		var s []string
		for _, m := range in.paramList() {
			s = append(s, m.name+"="+string(m.value))
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct{ params, want, meta string }{
		{`{"a":1,"b":2}`, "a=1,b=2", "a=1,b=2,_meta={}"},
		{`{"a":1,"_meta":{"x":1},"b":2,"c":3}`, "a=1,_meta={\"x\":1},b=2,c=3", "a=1,_meta={},b=2,c=3"},
		{`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}`, "a=1,b=2,c=3,d=4,e=5,f=6", "a=1,b=2,c=3,d=4,e=5,f=6,_meta={}"},
		{`{"a":1,"b":2,"c":3,"_meta":null,"e":5}`, "a=1,b=2,c=3,_meta=null,e=5", "a=1,b=2,c=3,_meta={},e=5"},
	} {
		in := readMsg([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":` + tc.params + `}`))
		if in.bad != nil || in.ambiguous != nil || !in.object {
			t.Fatalf("%s: bad %v, ambiguous %v, object %v", tc.params, in.bad, in.ambiguous, in.object)
		}
		if got := names(&in); got != tc.want {
			t.Errorf("%s: members %s, want %s", tc.params, got, tc.want)
		}
		if v := string(in.param("b")); v != "2" {
			t.Errorf("%s: param b = %q, want 2", tc.params, v)
		}
		in.setMeta(json.RawMessage(`{"new":true}`), json.RawMessage(`{}`))
		if got := names(&in); got != tc.meta {
			t.Errorf("%s: after setMeta %s, want %s", tc.params, got, tc.meta)
		}
	}
}
