package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPSlowClientStallsNobody: client A holds streams open and never
// reads them while one backend, shared with client B, floods them — first
// progress (coalesced: A's session lives on, and gets the latest progress
// before its result), then log messages (not coalescable: A's session is
// ended at its budget). B's calls to the same backend are answered all
// along, and the gateway's peak memory stays far below what was sent.
func TestHTTPSlowClientStallsNobody(t *testing.T) {
	const budget = 1 << 20
	// The flood takes as long as the machine makes it (minutes with both
	// cores busy): the call's timeout must not end it first.
	flooder := tb("tb")
	flooder.TimeoutMS = 3600_000
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"session_buffer_bytes": budget}}, flooder))
	b := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, "b", nil)
	base := gatewayMem(t, g)

	// Progress: 100,000 notifications (about 16 MB) on A's call stream.
	const steps = 100000
	a := initRaw(t, g)
	flood := postMCP(t, g.base+"/mcp", a, `{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"name":"tb.progress","arguments":{"steps":100000,"ms":0},"_meta":{"progressToken":"pa"}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	for i := range 20 {
		if got := callEcho(t, b, "tb.echo", map[string]any{"i": i}); got["i"] != float64(i) {
			t.Fatalf("B's echo %d: %v", i, got)
		}
	}
	// The flood is over once the gateway has A's call's result too (the
	// 21st call). A reads at last: its call's result, after the latest
	// progress, and far fewer events than were sent.
	testutil.WaitFor(t, 4*testutil.DefaultTimeout, "A's call to be answered by the backend", func() bool {
		return toolCalls(t, g) == 21
	})
	evs := readEventsTo(t, flood.Body, func(evs []sseEvent) bool { return strings.Contains(evs[len(evs)-1].data, `"id":"a1"`) })
	flood.Body.Close()
	if !strings.Contains(evs[len(evs)-1].data, `"result"`) {
		t.Fatalf("A's call failed: %s", evs[len(evs)-1].data)
	}
	if len(evs) < 2 || !strings.Contains(evs[len(evs)-2].data, `"progress":100000`) {
		t.Errorf("the last progress before the result: %+v", evs[max(len(evs)-2, 0)])
	}
	if len(evs) > steps/3 { // what the connection's buffers took before the writer blocked, then the latest
		t.Errorf("%d events on the slow client's stream for %d progress notifications: not coalesced", len(evs), steps)
	}
	t.Logf("%d progress notifications reached the slow client as %d events", steps, len(evs)-1)
	if r := postMCP(t, g.base+"/mcp", a, `{"jsonrpc":"2.0","id":"a2","method":"ping"}`, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("A's session after a progress flood: %d, want it alive", r.StatusCode)
	}

	// Log messages, which every session gets, on A's standalone stream,
	// which A never reads: 8 KB each, until A's session ends.
	aGet := getURL(t, g.base+"/mcp", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": a})
	sent := logFloodUntil(t, g, b, a, func() bool {
		return postMCP(t, g.base+"/mcp", a, `{"jsonrpc":"2.0","id":"a3","method":"ping"}`, nil).StatusCode == http.StatusNotFound
	})
	// A's stream ends (the gateway cut it); B goes on.
	_, _ = io.Copy(io.Discard, aGet.Body)
	if got := callEcho(t, b, "tb.echo", map[string]any{"after": true}); got["after"] != true {
		t.Errorf("B's echo after A's session ended: %v", got)
	}
	if runtime.GOOS == "linux" {
		peak := gatewayMem(t, g) - base
		t.Logf("gateway peak RSS grew by %.0f MB; %d MB of progress and %d MB of log messages were sent towards the slow client", peak, steps*160>>20, sent>>20)
		limit := 64.0 // MB: the budget, the event store's bound, buffers
		if testutil.Race {
			limit *= 4 // the race detector's shadow memory
		}
		if peak > limit {
			t.Errorf("gateway peak RSS grew by %.0f MB: the slow client's messages were not bounded", peak)
		}
	}
}

// logFloodUntil has B call tb.log (100 messages of 8 KB, which every
// session gets) until ended says that the slow client's session (id) has
// ended; each call must be answered. It returns how many bytes were
// logged, and waits for the gateway's warning of the session it ended. The
// gateway forwards a backend's log messages at up to 100 a second: B,
// which reads its stream, must keep up with 800 KB/s, which a busy machine
// (or Wine) does; at 64 KB a message it did not always, and its session
// was ended too.
//
// The warning is logged before the session ends, but reaches the test
// later: through the gateway's log sink (a goroutine) and its stderr pipe.
// On a busy machine it came after a single look, so the test waits for
// it. The flood also makes the sink drop some of the backend's log records
// ("N log records dropped"), as it should when stderr is read slower than
// a backend writes: backend output is dropped first, and the gateway's own
// records, this warning among them, are kept (TestLogSinkKeepsGatewayRecords).
func logFloodUntil(t *testing.T, g *httpGW, b *mcp.ClientSession, id string, ended func() bool) int {
	t.Helper()
	data, _ := json.Marshal(strings.Repeat("l", 8<<10))
	sent := 0
	for !ended() {
		if sent > 1<<30 {
			t.Fatalf("the slow client's session still open after %d bytes of log messages it did not read", sent)
		}
		res, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "tb.log", Arguments: map[string]any{"count": 100, "data": json.RawMessage(data)}})
		if err != nil || res.IsError {
			t.Fatalf("B's log call: %v %+v", err, res)
		}
		sent += 100 * len(data)
	}
	warned := func() bool {
		for _, l := range strings.Split(g.stderr.String(), "\n") {
			if strings.Contains(l, "its client does not read its stream") && strings.Contains(l, "session="+id) {
				return true
			}
		}
		return false
	}
	if !testutil.Poll(testutil.DefaultTimeout, warned) {
		t.Errorf("no warning for the session that was ended (%s):\n%s", id, g.stderr)
	}
	return sent
}

// TestHTTPSlowSSEClientStallsNobody: the same for a 2024-11-05 client
// (/sse) that reads its endpoint event and then nothing: its session ends
// at its budget, B's calls are answered all along.
func TestHTTPSlowSSEClientStallsNobody(t *testing.T) {
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"session_buffer_bytes": 1 << 20}}, tb("tb")))
	b := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, "b", nil)
	stream := getURL(t, g.base+"/sse", map[string]string{"Accept": "text/event-stream"})
	endpoint := readEvents(t, stream.Body, 1)[0].data
	post := func(body string) int {
		req, _ := http.NewRequest(http.MethodPost, g.base+endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`); c != http.StatusAccepted {
		t.Fatalf("initialize: %d", c)
	}
	if c := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); c != http.StatusAccepted {
		t.Fatalf("initialized: %d", c)
	}
	_, id, _ := strings.Cut(endpoint, "sessionid=")
	sent := logFloodUntil(t, g, b, id, func() bool { return post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`) == http.StatusNotFound })
	t.Logf("the SSE session ended after %d MB of log messages it did not read", sent>>20)
	if got := callEcho(t, b, "tb.echo", map[string]any{"after": true}); got["after"] != true {
		t.Errorf("B's echo after the SSE session ended: %v", got)
	}
}

// gatewayMem is the gateway's peak RSS (VmHWM) so far, in MB; 0 where
// /proc is not.
func gatewayMem(t *testing.T, g *httpGW) float64 {
	t.Helper()
	if runtime.GOOS != "linux" {
		return 0
	}
	mem, err := benchProcStatus(g.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return mem.hwm
}

// toolCalls is how many tools/calls the gateway finished, by its metrics.
func toolCalls(t *testing.T, g *httpGW) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(getBody(t, g.base+"/metrics"), "\n") {
		if v, ok := strings.CutPrefix(line, "mcp_gateway_tool_calls_total{"); ok {
			k, _ := strconv.Atoi(v[strings.LastIndexByte(v, ' ')+1:])
			n += k
		}
	}
	return n
}

// getBody is the body of a GET of u.
func getBody(t *testing.T, u string) string {
	t.Helper()
	r := getURL(t, u, nil)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
