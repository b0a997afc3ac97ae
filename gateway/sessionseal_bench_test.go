package gateway

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkSealedSessionPOST measures the gateway's own work on one POST
// of a 2025-11-25 session, in process (no network): a tools/call of a
// testbackend's echo tool, on an in-memory session of a gateway without a
// key ("memory"), and on a sealed session of a gateway with a key whose
// two HTTP fronts (two replicas' fronts on one gateway, one backend)
// take turns: the issuer's, and the other's copy (adopt) ("sealed"). The
// two alternate in one run; reported are their p50 and the ratio. The
// target (issue 36): p50 sealed/memory ≤ 1.05. "open" is what opening a
// sealed id costs, once per session and replica (adopt).
func BenchmarkSealedSessionPOST(b *testing.B) {
	memory, _ := newGateway(b, nil, testServer("tb"))
	keyed, _ := newGateway(b, nil, testServer("tb"))
	keyed.opts.StateKey = []byte("bench-key")
	plain := memory.NewHTTPFront(HTTPOptions{})
	b.Cleanup(plain.Close)
	var replicas []*HTTPFront
	for _, name := range []string{"r0", "r1"} {
		f := keyed.NewHTTPFront(HTTPOptions{Replica: name})
		b.Cleanup(f.Close)
		replicas = append(replicas, f)
	}
	post := func(h *HTTPFront, sid, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(sessionIDHeader, sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	open := func(h *HTTPFront) string {
		w := post(h, "", strings.Replace(initializeTS, `"claude-ai"`, `"bench"`, 1))
		if w.Code != http.StatusOK {
			b.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
		return w.Header().Get(sessionIDHeader)
	}
	memSID, sealedSID := open(plain), open(replicas[0])
	if !strings.HasPrefix(sealedSID, "r0.s1") {
		b.Fatalf("sealed id %q", sealedSID)
	}
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tb.echo","arguments":{"text":"hello","n":12345678901234567890123}}}`
	turn := 0
	paths := []func(){
		func() { check(b, post(plain, memSID, call)) },
		func() {
			turn++
			check(b, post(replicas[turn%2], sealedSID, call))
		},
	}
	for _, p := range paths {
		for range 100 { // warm up; the first waits for the backend
			p()
		}
	}
	var lat [2][]time.Duration
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		for j := range paths {
			i := (j + n) % 2 // each goes first every other time
			start := time.Now()
			paths[i]()
			lat[i] = append(lat[i], time.Since(start))
		}
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e3
	}
	m, s := p50(lat[0]), p50(lat[1])
	b.ReportMetric(m, "memory-p50-µs")
	b.ReportMetric(s, "sealed-p50-µs")
	b.ReportMetric(s/m, "p50-sealed/memory")

	// Opening an id, as a replica does once per session (adopt).
	st := replicas[1].seal
	start := time.Now()
	const opens = 1000
	for range opens {
		if _, _, err := st.open(sealedSID, "", "", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start))/opens/1e3, "open-µs")
}

// check fails b unless w is a tool's result.
func check(b *testing.B, w *httptest.ResponseRecorder) {
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"result"`) || strings.Contains(w.Body.String(), `"isError":true`) {
		b.Fatalf("%d %.300s", w.Code, w.Body)
	}
}
