package main

// End-to-end tests of the one tools/call path (docs/errors.md): request ids
// come back exactly as the client sent them, on every path; the envelope is
// decoded as strictly as go-sdk decodes it; cancellation, duplicates and
// _meta behave the same whoever serves the call.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// repliesTo returns the responses nobody waited for whose id is id, byte for
// byte.
func (s *proc) repliesTo(id string) []testutil.Msg {
	s.t.Helper()
	var out []testutil.Msg
	for _, m := range s.Since(0, "") {
		if m.ID() == id {
			out = append(out, m)
		}
	}
	return out
}

// waitReplies waits until n responses with this exact id have arrived.
func (s *proc) waitReplies(id string, n int) []testutil.Msg {
	s.t.Helper()
	testutil.WaitFor(s.t, testutil.DefaultTimeout, "a reply to id "+id, func() bool { return len(s.repliesTo(id)) >= n })
	return s.repliesTo(id)
}

// sync makes sure that everything the gateway wrote before answering a
// fresh ping has been read.
func (s *proc) sync() {
	s.t.Helper()
	if r := s.Call("ping", `{}`); r.Map()["result"] == nil {
		s.t.Fatalf("ping: %s", r)
	}
}

// Ids that a float64 cannot hold, or that are not integers, are answered
// with exactly the bytes the client sent — by the gateway's own tools/call
// path and by go-sdk's (ping) alike — and each request gets one response.
func TestIDsExactAsSent(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	ids := []string{"9007199254740993", "9223372036854775808", "1e30", "1.5", "-0", `"x\u0041"`}
	for _, id := range ids {
		s.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if r := s.waitReplies(id, 1); r[0].Map()["result"] == nil {
			t.Errorf("ping id %s: %s", id, r[0])
		}
		s.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"tb.echo","arguments":{"id":` + id + `}}}`)
		r := s.waitReplies(id, 2)
		if !bytes.Contains(r[1].Member("result"), []byte(`"structuredContent":{"id":`+id+`}`)) {
			t.Errorf("tools/call id %s: %s", id, r[1])
		}
	}
	// 99.4 is not 99: both calls are served, each answered once.
	s.Send(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"tb.slow","arguments":{"ms":300}}}`)
	s.Send(`{"jsonrpc":"2.0","id":99.4,"method":"tools/call","params":{"name":"tb.echo","arguments":{}}}`)
	if r := s.waitReplies("99.4", 1); r[0].Map()["result"] == nil {
		t.Errorf("id 99.4: %s", r[0])
	}
	if r := s.waitReplies("99", 1); !bytes.Contains(r[0].Member("result"), []byte("slept")) {
		t.Errorf("id 99: %s", r[0])
	}
	s.sync()
	for _, id := range append(ids, "99", "99.4") {
		want := 2
		if strings.HasPrefix(id, "99") {
			want = 1
		}
		if got := s.repliesTo(id); len(got) != want {
			t.Errorf("id %s: %d replies, want %d: %v", id, len(got), want, got)
		}
	}
}

// "id": null is not a valid request id: the request is answered with
// -32600 and id null (JSON-RPC 2.0, section 5), not silently dropped; ids
// that are neither strings nor numbers likewise.
func TestNullAndBadIDsAnswered(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"tb.echo"}}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	} {
		mark := len(s.repliesTo("null"))
		s.Send(msg)
		r := s.waitReplies("null", mark+1)[mark]
		if code, _, _ := r.Error(t); code != -32600 {
			t.Errorf("%s: reply %s, want -32600", msg, r)
		}
	}
	s.sync()
	if n := len(s.repliesTo("null")); n != 3 {
		t.Errorf("%d replies with id null, want 3", n)
	}
}

// Member names are case-sensitive, as go-sdk decodes them: "ID" and
// "METHOD" are not "id" and "method".
func TestEnvelopeKeysCaseSensitive(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	for _, msg := range []string{
		`{"jsonrpc":"2.0","ID":7,"METHOD":"ping"}`,
		`{"ID":7,"METHOD":"ping"}`,
		`{"JSONRPC":"2.0","id":8,"method":"ping"}`,
	} {
		mark := len(s.repliesTo("null")) + len(s.repliesTo("8"))
		s.Send(msg)
		testutil.WaitFor(t, testutil.DefaultTimeout, "a reply to "+msg, func() bool { return len(s.repliesTo("null"))+len(s.repliesTo("8")) > mark })
	}
	s.sync()
	if n := len(s.repliesTo("7")); n != 0 {
		t.Errorf("%d replies with id 7, want none: %v", n, s.repliesTo("7"))
	}
	for _, r := range append(s.repliesTo("null"), s.repliesTo("8")...) {
		if code, _, _ := r.Error(t); code != -32600 {
			t.Errorf("reply %s, want -32600", r)
		}
	}
}

// A duplicate of an id in flight is rejected without touching the original;
// the client's cancellation of the original then suppresses its response
// (docs/errors.md): the duplicate's -32600 is the only reply with that id.
func TestDuplicateIDThenCancelOriginal(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tb.slow","arguments":{"ms":1500}}}`)
	s.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tb.echo","arguments":{}}}`)
	dup := s.waitReplies("1", 1)[0]
	if code, msg, _ := dup.Error(t); code != -32600 || msg != "request ID already in use" {
		t.Errorf("duplicate: %s", dup)
	}
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"stop"}}`)
	testutil.WaitFor(t, 10*time.Second, "the backend saw the cancellation", func() bool {
		return len(cancelled(s.structured("tb.stats", `{}`))) == 1
	})
	time.Sleep(300 * time.Millisecond) // a response would be on its way by now
	s.sync()
	if r := s.repliesTo("1"); len(r) != 1 {
		t.Errorf("replies with id 1: %v, want only the duplicate's error", r)
	}
}

// In lazy mode, gateway.call_tool forwards the client's progress token and
// _meta digit for digit, like a direct call.
func TestLazyCallToolMetaExact(t *testing.T) {
	t.Parallel()
	cfg := map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false, "tools_mode": "lazy"},
		"servers": []beServer{tb("tb")},
	}
	b, _ := json.Marshal(cfg)
	s := startRaw(t, testutil.TempFile(t, "config.yaml", string(b)), "e2e")
	s.toolsList()
	mark := s.Mark()
	r := s.Call("tools/call", `{"name":"gateway.call_tool","arguments":{"name":"tb.progress","arguments":{"steps":2,"ms":1}},"_meta":{"progressToken":12345678901234567890}}`)
	if r.Map()["result"] == nil {
		t.Fatalf("call_tool tb.progress: %s", r)
	}
	notes := s.Since(mark, "notifications/progress")
	if len(notes) != 2 {
		t.Errorf("%d progress notifications before the result, want 2", len(notes))
	}
	for _, n := range notes {
		if !bytes.Contains(n.Raw, []byte(`"progressToken":12345678901234567890`)) {
			t.Errorf("progress = %s, want token 12345678901234567890", n)
		}
	}
	s.Call("tools/call", `{"name":"gateway.call_tool","arguments":{"name":"tb.echo","arguments":{}},"_meta":{"example.com/n":12345678901234567890123,"example.com/f":1.50}}`)
	stats := s.callTool("tb.stats", `{}`).Member("result")
	for _, want := range []string{`"example.com/n":12345678901234567890123`, `"example.com/f":1.50`} {
		if !bytes.Contains(stats, []byte(want)) {
			t.Errorf("backend saw _meta %s, want %s", stats, want)
		}
	}
}

// A backend that stops reading its stdin holds up only its own calls:
// pings, cancellations and calls to other backends are answered while
// calls to it wait, though they are started from the same reader
// (docs/benchmarks.md, "the inline path").
func TestStuckBackendStallsNothingElse(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("stuck"), tb("ok")), "e2e")
	s.toolsList()
	// stuck answers, then reads nothing for 8 s.
	if r := s.callTool("stuck.deaf", `{"ms":8000}`); r.Map()["result"] == nil {
		t.Fatalf("stuck.deaf: %s", r)
	}
	// Far more than its stdin pipe and read buffer hold.
	big := strings.Repeat("x", 8<<10)
	var flood []string
	for range 64 {
		flood = append(flood, s.Request("tools/call", `{"name":"stuck.echo","arguments":{"s":"`+big+`"}}`))
	}
	if r := s.Call("ping", `{}`); r.Map()["result"] == nil {
		t.Errorf("ping: %s", r)
	}
	if r := s.callTool("ok.echo", `{"a":1}`); r.Map()["result"] == nil {
		t.Errorf("ok.echo: %s", r)
	}
	last := flood[len(flood)-1]
	s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + last + `}}`)
	s.sync() // the cancellation has been read
	for _, id := range flood {
		if s.Answered(id) {
			t.Errorf("call %s to the stuck backend was answered before the ping returned: the reader waited for the stuck backend (or it did not stop reading)", id)
		}
	}
	// Once it reads again, every call but the cancelled one is answered.
	for _, id := range flood[:len(flood)-1] {
		if r := s.Await(id, testutil.DefaultTimeout); r.Map()["result"] == nil {
			t.Errorf("call %s: %s", id, r)
		}
	}
	s.sync()
	if s.Answered(last) || len(s.repliesTo(last)) > 0 {
		t.Errorf("the cancelled call %s was answered", last)
	}
}

// A burst of calls in one write, to two backends, is answered call by
// call, each exactly once with its own result: the requests of a burst go
// to each backend in one write, the responses of a burst to the client in
// one write.
func TestBurstOfCallsAnsweredOnce(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("a"), tb("b")), "e2e")
	s.toolsList()
	var burst strings.Builder
	const n = 300
	for i := range n {
		server := []string{"a", "b"}[i%2]
		fmt.Fprintf(&burst, `{"jsonrpc":"2.0","id":"c%d","method":"tools/call","params":{"name":"%s.echo","arguments":{"i":%d}}}`+"\n", i, server, i)
	}
	s.Send(strings.TrimSuffix(burst.String(), "\n"))
	testutil.WaitFor(t, testutil.DefaultTimeout, "every reply", func() bool { return len(s.Since(0, "")) >= n })
	s.sync()
	replies := map[string][]testutil.Msg{}
	for _, m := range s.Since(0, "") {
		id := m.ID()
		replies[id] = append(replies[id], m)
	}
	for i := range n {
		r := replies[fmt.Sprintf(`"c%d"`, i)]
		if len(r) != 1 || !bytes.Contains(r[0].Member("result"), []byte(fmt.Sprintf(`"structuredContent":{"i":%d}`, i))) {
			t.Errorf("replies to c%d: %v", i, r)
		}
	}
}

// Before initialize, a tools/call of the handshake era gets go-sdk's error
// for any method then; a client of 2026-07-28, which sends no initialize
// and says who it is in each request's _meta, is served at once: its
// server/discover gets the versions and capabilities, its call the result
// with the resultType and serverInfo of its era, under the names its
// clientInfo calls for (claude-code: strict).
func TestToolsCallBeforeInitialize(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, tb("tb")))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tb.echo","arguments":{}}}` + "\n")
	r := p.readLine()
	if e, _ := r["error"].(map[string]any); e == nil || e["message"] != `method "tools/call" is invalid during session initialization` || errCode(r) != -32600 {
		t.Errorf("tools/call before initialize: %v", r)
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}`
	p.send(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}` + "\n")
	r = p.readLine()
	res, _ := r["result"].(map[string]any)
	if idOf(r) != "3" || fmt.Sprint(res["supportedVersions"]) != "[2024-11-05 2025-03-26 2025-06-18 2025-11-25 2026-07-28]" || res["capabilities"] == nil || res["resultType"] != "complete" {
		t.Errorf("server/discover: %v", r)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tb__echo","arguments":{"k":1},` + meta + `}}` + "\n")
	r = p.readLine()
	res, _ = r["result"].(map[string]any)
	info, _ := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if idOf(r) != "2" || res["resultType"] != "complete" || info["name"] != "mcp-gateway" || fmt.Sprint(res["structuredContent"]) != "map[k:1]" {
		t.Errorf("2026-07-28 tools/call, no initialize: %v", r)
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25",` + meta + `}}` + "\n")
	if r = p.readLine(); idOf(r) != "4" || errCode(r) != -32601 {
		t.Errorf("initialize of 2026-07-28: %v", r)
	}
}

// A call followed in the same write by blank input (a blank line, trailing
// spaces) reaches its backend at once: the gateway holds calls back to batch
// them only while whole messages are buffered, and blank input is none. It
// used to wait there for the next message, and got -32001 at its timeout.
func TestCallWithTrailingBlankInput(t *testing.T) {
	t.Parallel()
	be := tb("tb")
	be.TimeoutMS = 300000 // longer than the wait below: the answer must be the result
	s := startRaw(t, beConfig(t, be), "e2e")
	for i, tail := range []string{"\n", " ", "\r\n\t \n", "\n{\"jsonrpc\":"} {
		id := fmt.Sprint(100 + i)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"tb.echo","arguments":{"text":"x"}}}` + "\n" + tail)
		if r := s.waitReplies(id, 1)[0]; r.Map()["result"] == nil {
			t.Fatalf("call followed by %q: %s", tail, r)
		}
		if strings.HasPrefix(tail, "\n{") {
			s.send(`"2.0","method":"notifications/cancelled","params":{"requestId":0}}` + "\n")
		}
	}
}
