package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeToolCallMeta: a tools/call's _meta is kept as the object the
// client sent (read by member where needed, no map per call); one that is
// no object is refused, null is none, and only the keys a backend may see
// go to it.
func TestDecodeToolCallMeta(t *testing.T) {
	read := func(params string) (toolCall, error) {
		t.Helper()
		m := readMsg([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`))
		if m.bad != nil || m.ambiguous != nil {
			t.Fatalf("%s: bad %v, ambiguous %v", params, m.bad, m.ambiguous)
		}
		return decodeToolCall(&m)
	}
	for _, meta := range []string{`[1]`, `"x"`, `1`, `true`} {
		if _, err := read(`{"name":"a.b","_meta":` + meta + `}`); err == nil || !strings.Contains(err.Error(), "_meta must be an object") {
			t.Errorf("_meta %s: err %v, want _meta must be an object", meta, err)
		}
	}
	tc, err := read(`{"name":"a.b","_meta":null}`)
	if err != nil || tc.meta != nil || tc.progressToken() != nil {
		t.Errorf("_meta null: meta %q, token %q, err %v; want none", tc.meta, tc.progressToken(), err)
	}
	tc, err = read(`{"name":"a.b","arguments":{},"_meta":{ "progressToken" : 7, "x.y/z":{"k":1},"io.modelcontextprotocol/clientInfo":{}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tc.progressToken()); got != "7" {
		t.Errorf("progressToken %q, want 7", got)
	}
	fwd := metaToForward(tc.meta)
	if len(fwd) != 1 || string(fwd["x.y/z"].(json.RawMessage)) != `{"k":1}` {
		t.Errorf("forwarded _meta %v, want only x.y/z", fwd)
	}
	if metaToForward(json.RawMessage(`{"progressToken":1}`)) != nil {
		t.Error("a _meta of only a progressToken forwards something; want nothing")
	}
}

// A result is written whole, compacted, under the request's id, whether it
// is held for the burst or not; none at all is MCP's empty result, never a
// message left out.
func TestWriteResult(t *testing.T) {
	s, rs := testSession(t)
	for _, tc := range []struct {
		result   string
		buffered bool
		want     string
	}{
		{`{ "content": [] }`, false, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
		{`{"a":1}`, true, `{"jsonrpc":"2.0","id":7,"result":{"a":1}}`},
		{"", false, `{"jsonrpc":"2.0","id":7,"result":{}}`},
	} {
		var result json.RawMessage
		if tc.result != "" {
			result = json.RawMessage(tc.result)
		}
		if err := s.writeResult(json.RawMessage(`7`), result, tc.buffered); err != nil {
			t.Fatal(err)
		}
		select { // Send writes before it returns
		case got := <-rs.wrote:
			if string(got) != tc.want {
				t.Errorf("result %q: wrote %s, want %s", tc.result, got, tc.want)
			}
		default:
			t.Errorf("result %q: nothing written, want %s", tc.result, tc.want)
		}
	}
}
