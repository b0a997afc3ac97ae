package main

// End-to-end tests of what passes through the gateway unchanged
// (docs/transparency.md): results byte for byte, progress under the
// client's token, _meta, and cancellation.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// Results pass through byte for byte: the raw bytes of the result member are
// testbackend's — 19+ digit integers, 1E+400, 2.50, \u escapes, <&>, an
// unknown content type, _meta, and isError:true (a result, not an error) —
// except for insignificant whitespace between tokens, which go-sdk's
// encoder drops (a message on the wire is one line anyway). Each is
// compared with what a testbackend of its own answers without the gateway
// before the golden file, so that -update cannot record a gateway that
// changed a byte.
func TestBackendOddResultsByteIdentical(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	direct := testutil.StartChild(t, backendBin, nil, baseEnv(t), testutil.ClientOptions{})
	defer direct.Stop(10 * time.Second)
	direct.Call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"direct","version":"1"}}`)
	for _, c := range []struct{ args, golden string }{{`{}`, "odd_result.json"}, {`{"isError":true}`, "odd_error_result.json"}} {
		r := s.callTool("tb.odd", c.args)
		if r.Map()["error"] != nil {
			t.Errorf("%s became an error: %s", c.args, r)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, direct.Call("tools/call", `{"name":"odd","arguments":`+c.args+`}`).Member("result")); err != nil {
			t.Fatal(err)
		}
		if got := r.Member("result"); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("odd %s through the gateway:\n got %s\nwant %s (direct)", c.args, got, want.Bytes())
		}
		testutil.Golden(t, c.golden, r.Member("result"))
	}
	// Arguments go out as received; structuredContent comes back intact.
	r := s.callTool("tb.echo", `{"n":12345678901234567890123,"f":1.50,"s":"<&>"}`)
	var res struct {
		SC json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Member("result"), &res); err != nil {
		t.Fatal(err)
	}
	if string(res.SC) != `{"n":12345678901234567890123,"f":1.50,"s":"<&>"}` {
		t.Errorf("echo structuredContent = %s", res.SC)
	}
}

// Progress from the backend reaches the client under the client's own token
// (string or number); the client's other _meta reaches the backend.
func TestBackendProgressAndMeta(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	for _, tok := range []string{`"tok-7"`, `42`} {
		mark := s.Mark()
		r := s.Call("tools/call", `{"name":"tb.progress","arguments":{"steps":3,"ms":100},"_meta":{"progressToken":`+tok+`}}`)
		if text := r.Result(t)["content"].([]any)[0].(map[string]any)["text"]; text != "done" {
			t.Errorf("progress result = %s", r)
		}
		testutil.WaitFor(t, 5*time.Second, "3 progress notifications", func() bool {
			return len(s.Since(mark, "notifications/progress")) >= 3
		})
		for i, n := range s.Since(mark, "notifications/progress") {
			var p struct {
				Params struct {
					Token    json.RawMessage `json:"progressToken"`
					Progress float64         `json:"progress"`
					Total    float64         `json:"total"`
					Message  string          `json:"message"`
				} `json:"params"`
			}
			json.Unmarshal(n.Raw, &p)
			if string(p.Params.Token) != tok || p.Params.Progress != float64(i+1) || p.Params.Total != 3 || p.Params.Message != fmt.Sprintf("step %d", i+1) {
				t.Errorf("progress %d = %s, want token %s", i, n, tok)
			}
		}
	}
	s.Call("tools/call", `{"name":"tb.echo","arguments":{},"_meta":{"example.com/k":"v"}}`)
	meta, _ := s.structured("tb.stats", `{}`)["meta"].(map[string]any)
	if meta["example.com/k"] != "v" {
		t.Errorf("backend saw _meta %v, want example.com/k", meta)
	}
}
