package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestReplicasBehindHAProxy: three gateway processes behind a real load
// balancer (HAProxy from the OS packages, round-robin, no stickiness) serve
// a client of 2026-07-28 as one: 1,000 calls, lists and multi-round-trip
// calls (whose retries land on whichever replica is next) with no error;
// a replica stopped with SIGTERM mid-run loses nothing but what it had in
// flight (its shutdown lets those finish). A call held for input by a
// backend of the handshake era lives in the replica that holds it: its
// retry elsewhere is refused with an error that says so, and sent to that
// replica it completes (docs/deploy.md).
func TestReplicasBehindHAProxy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("HAProxy from the OS packages: Linux only")
	}
	if testing.Short() {
		t.Skip("skipped under -short: the replicas behind HAProxy run in the full suite (scripts/test)")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		haproxy = "/usr/sbin/haproxy"
		if _, err := os.Stat(haproxy); err != nil {
			t.Fatal("no haproxy: scripts/os-packages installs the Debian package (scripts/test runs it)")
		}
	}
	t.Parallel()
	everything := testutil.MustBuild("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", "")
	cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000,
  "http": {"state_key_env": "MCP_GATEWAY_STATE_KEY"}},
 "servers": [
  {"name": "everything", "command": `+strconv.Quote(everything)+`, "prefix": ""},
  {"name": "calc", "command": `+strconv.Quote(backendBin)+`, "protocol": "2025-11-25"}]}`)
	env := append(baseEnv(t), "MCP_GATEWAY_STATE_KEY=replicas-share-this-key-"+strconv.Itoa(os.Getpid()))
	var replicas []*httpGW
	for range 3 {
		replicas = append(replicas, startHTTPEnv(t, cfg, env))
	}
	front := startHAProxy(t, haproxy, replicas)

	var asked atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "replicas", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "color": "green"}}, nil
		},
	})
	cs, err := client.Connect(beCtx(t), &mcp.StreamableClientTransport{Endpoint: front + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect through HAProxy: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client speaks %s through the replicas", v)
	}

	// 1,000 operations from 8 workers; replica 1 gets SIGTERM after 400.
	const total, workers, killAt = 1000, 8, 400
	type failure struct {
		op       string
		err      error
		startedN int64 // operations started before this one
	}
	var (
		next     atomic.Int64
		done     atomic.Int64
		mu       sync.Mutex
		failures []failure
		killed   = make(chan int64, 1) // operations started when the SIGTERM was sent
		rounds   atomic.Int64
	)
	op := func(i int64) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
		defer cancel()
		switch i % 4 {
		case 0:
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
			if err == nil && (res.IsError || len(res.Content) == 0) {
				err = fmt.Errorf("result %+v", res)
			}
			return "tools/call", err
		case 1:
			res, err := cs.ListTools(ctx, nil)
			if err == nil && !slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == "calc.echo" }) {
				err = fmt.Errorf("the list lacks calc.echo: %d tools", len(res.Tools))
			}
			return "tools/list", err
		case 2:
			// Two rounds of input, each retry a POST of its own: the
			// backend's requestState carries the call, so any replica
			// (and its own backend process) continues it.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_input_required_result_multi_round"})
			if err == nil {
				text := ""
				if len(res.Content) > 0 {
					if tc, ok := res.Content[0].(*mcp.TextContent); ok {
						text = tc.Text
					}
				}
				if res.IsError || !strings.Contains(text, "Ada") || !strings.Contains(text, "green") {
					err = fmt.Errorf("multi-round result %q", text)
				} else {
					rounds.Add(1)
				}
			}
			return "multi-round tools/call", err
		default:
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
			if err == nil && len(res.Contents) == 0 {
				err = fmt.Errorf("no contents")
			}
			return "resources/read", err
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				if i == killAt {
					_ = replicas[1].cmd.Process.Signal(syscall.SIGTERM)
					killed <- i
				}
				name, err := op(i)
				if err != nil {
					mu.Lock()
					failures = append(failures, failure{name, err, i})
					mu.Unlock()
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	killedAt := <-killed
	if err := <-replicas[1].done; err != nil {
		t.Errorf("the replica stopped with SIGTERM exited with %v\n%s", err, replicas[1].stderr)
	}
	replicas[1].done <- nil
	for _, f := range failures {
		// Only what the stopped replica had in flight may be lost: an
		// operation started after the SIGTERM has no excuse.
		if f.startedN > killedAt+workers {
			t.Errorf("operation %d (%s), started after the SIGTERM (at %d), failed: %v", f.startedN, f.op, killedAt, f.err)
		} else {
			t.Logf("operation %d (%s), in flight at the SIGTERM, failed: %v", f.startedN, f.op, f.err)
		}
	}
	if n := len(failures); n > workers {
		t.Errorf("%d operations failed; at most the %d in flight at the SIGTERM may", n, workers)
	}
	if rounds.Load() < total/4-workers || asked.Load() < 2*rounds.Load() {
		t.Errorf("%d multi-round calls completed, %d inputs asked", rounds.Load(), asked.Load())
	}
	for _, i := range []int{0, 2} {
		// Round-robin spread the calls: each live replica served some.
		if n := toolCallsServed(t, replicas[i].base); n == 0 {
			t.Errorf("replica %d served no tools/call", i)
		}
	}
	t.Logf("%d operations through 3 replicas (one stopped after %d): %d failed, %d multi-round calls of 2 rounds, %d inputs asked",
		done.Load(), killedAt, len(failures), rounds.Load(), asked.Load())

	// A call held for input by a backend of the handshake era (calc's
	// sample asks the client for a sampling mid-call): its retry through
	// the balancer reaches the other live replica, which refuses it; sent
	// to the replica that holds it, it completes.
	live := []*httpGW{replicas[0], replicas[2]}
	first := post2026(t, front, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calc.sample","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`, "tools/call", "calc.sample")
	state, _ := first.Result["requestState"].(string)
	inputs, _ := first.Result["inputRequests"].(map[string]any)
	if first.Result["resultType"] != "input_required" || state == "" || len(inputs) != 1 {
		t.Fatalf("the held call's first answer: %s", first.raw)
	}
	var key string
	for k := range inputs {
		key = k
	}
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calc.sample","arguments":{},"requestState":` + strconv.Quote(state) +
		`,"inputResponses":{` + strconv.Quote(key) + `:{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`
	elsewhere := post2026(t, front, retry, "tools/call", "calc.sample")
	if elsewhere.Error == nil || !strings.Contains(elsewhere.Error.Message, "another gateway process") {
		t.Fatalf("a held call's retry through round-robin (another replica): %s", elsewhere.raw)
	}
	completed := 0
	for _, g := range live {
		r := post2026(t, g.base, retry, "tools/call", "calc.sample")
		switch {
		case r.Error == nil && strings.Contains(r.raw, "sampled"):
			completed++
		case r.Error != nil && strings.Contains(r.Error.Message, "another gateway process"):
		default:
			t.Errorf("the retry sent to %s: %s", g.base, r.raw)
		}
	}
	if completed != 1 {
		t.Errorf("the held call completed at %d replicas, want the one that holds it", completed)
	}
}

// TestHTTPHeldCallAcrossPosts: over HTTP each request of 2026-07-28 is a
// POST of its own, and so is the retry of a call held for input: the held
// call outlives the POST that started it (it was cancelled with it), and
// the retry — with the backend's request answered — gets its result. A
// tools/call, a prompts/get and a resources/read are held alike.
func TestHTTPHeldCallAcrossPosts(t *testing.T) {
	t.Parallel()
	cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000},
 "servers": [{"name": "calc", "command": `+strconv.Quote(backendBin)+`, "args": ["-asks"], "protocol": "2025-11-25"}]}`)
	g := startHTTP(t, cfg)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}}}`
	for _, tc := range []struct {
		method, name, params string // params without _meta
		asks, answer, want   string // the backend's request, the client's answer, what the result then holds
	}{
		{"tools/call", "calc.sample", `"name":"calc.sample","arguments":{}`,
			"sampling/createMessage", `{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}`, `"sampled"`},
		{"prompts/get", "calc.ask", `"name":"calc.ask"`,
			"elicitation/create", `{"action":"accept","content":{"name":"Ada"}}`, `hello Ada (accept)`},
		{"resources/read", "test://sampled", `"uri":"test://sampled"`,
			"sampling/createMessage", `{"role":"assistant","content":{"type":"text","text":"a word"},"model":"m"}`, `"text":"a word"`},
	} {
		first := post2026(t, g.base, `{"jsonrpc":"2.0","id":1,"method":"`+tc.method+`","params":{`+tc.params+`,`+meta+`}}`, tc.method, tc.name)
		state, _ := first.Result["requestState"].(string)
		inputs, _ := first.Result["inputRequests"].(map[string]any)
		if first.Result["resultType"] != "input_required" || state == "" || len(inputs) != 1 {
			t.Fatalf("%s: the held call's first answer: %s", tc.method, first.raw)
		}
		for key, in := range inputs {
			if m, _ := in.(map[string]any)["method"].(string); m != tc.asks {
				t.Errorf("%s: the input request is %s, want %s", tc.method, m, tc.asks)
			}
			retry := post2026(t, g.base, `{"jsonrpc":"2.0","id":2,"method":"`+tc.method+`","params":{`+tc.params+`,"requestState":`+strconv.Quote(state)+
				`,"inputResponses":{`+strconv.Quote(key)+`:`+tc.answer+`},`+meta+`}}`, tc.method, tc.name)
			if retry.Error != nil || retry.Result["resultType"] != "complete" || !strings.Contains(retry.raw, tc.want) {
				t.Errorf("%s: the retry: %s", tc.method, retry.raw)
			}
		}
	}
}

// TestHTTPHeldCallProgress: the progress of a call held for the client's
// input (hold.go) comes on the POST of the request that stands for the call
// then, under that request's own progressToken: before the backend asks,
// the first request's; after the client's answer, the retry's, every
// member as the backend sent it, before the result. It used to go on
// under the first request's token after that request had been answered
// input_required, its POST ended, and the retry got none: the TypeScript
// client of 2026-07-28 saw no progress of server-everything's long-running
// tool when the server's roots/list came during the call
// (TestTransparencyTypeScriptClients/everything/v2, under load).
func TestHTTPHeldCallProgress(t *testing.T) {
	t.Parallel()
	cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000},
 "servers": [{"name": "tb", "command": `+strconv.Quote(backendBin)+`, "args": ["-asks"], "protocol": "2025-11-25"}]}`)
	g := startHTTP(t, cfg)
	meta := func(token string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"progressToken":` + token + `}`
	}
	type message struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params map[string]any  `json:"params"`
		Result map[string]any  `json:"result"`
	}
	// post returns the progress params and the response of one POST.
	post := func(body string) (progress []map[string]any, resp message) {
		t.Helper()
		for _, raw := range messages2026(t, g.base, body, "tools/call", "tb.sample") {
			var m message
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			switch {
			case m.ID != nil:
				resp = m
			case m.Method == "notifications/progress":
				progress = append(progress, m.Params)
			default:
				t.Errorf("unexpected %s", raw)
			}
		}
		return progress, resp
	}
	step := func(token any, n int) map[string]any {
		return map[string]any{"progressToken": token, "progress": float64(n), "total": 3.0, "message": "step " + strconv.Itoa(n)}
	}

	progress, first := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tb.sample","arguments":{"steps":3},` + meta(`"first"`) + `}}`)
	state, _ := first.Result["requestState"].(string)
	inputs, _ := first.Result["inputRequests"].(map[string]any)
	if first.Result["resultType"] != "input_required" || state == "" || len(inputs) != 1 {
		t.Fatalf("the held call's first answer: %v", first)
	}
	if want := []map[string]any{step("first", 1)}; !reflect.DeepEqual(progress, want) {
		t.Errorf("the first request's progress: %v, want %v", progress, want)
	}
	for key := range inputs {
		progress, retry := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tb.sample","arguments":{"steps":3},"requestState":` + strconv.Quote(state) +
			`,"inputResponses":{` + strconv.Quote(key) + `:{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"m"}},` + meta(`2`) + `}}`)
		if retry.Result["resultType"] != "complete" {
			t.Errorf("the retry: %v", retry)
		}
		if want := []map[string]any{step(2.0, 2), step(2.0, 3)}; !reflect.DeepEqual(progress, want) {
			t.Errorf("the retry's progress: %v, want %v", progress, want)
		}
	}
}

// startHAProxy runs HAProxy in the foreground on a free loopback port,
// balancing round-robin over the replicas with no stickiness; a replica
// that stops is taken out by its health check (/healthz) and a request
// refused at connection is sent to another. It returns the balancer's URL.
func startHAProxy(t *testing.T, bin string, replicas []*httpGW) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return startHAProxyAt(t, bin, addr, replicas, "")
}

// startHAProxyAt is startHAProxy listening on addr, with extra lines in
// the backend's section (routing rules).
func startHAProxyAt(t *testing.T, bin, addr string, replicas []*httpGW, extra string) string {
	t.Helper()
	var servers strings.Builder
	for i, g := range replicas {
		fmt.Fprintf(&servers, "  server gw%d %s check inter 200ms fall 1 rise 2\n", i, strings.TrimPrefix(g.base, "http://"))
	}
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	os.WriteFile(cfg, []byte(`global
  maxconn 1000
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch
  retry-on conn-failure empty-response
frontend mcp
  bind `+addr+`
  default_backend gateways
backend gateways
  balance roundrobin
  option httpchk
  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host localhost
`+extra+servers.String()), 0o600)
	cmd := exec.Command(bin, "-db", "-f", cfg)
	var out testutil.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("haproxy:\n%s", out.String())
		}
	})
	url := "http://" + addr
	testutil.WaitFor(t, testutil.DefaultTimeout, "HAProxy to pass requests on "+addr, func() bool {
		select {
		case <-exited:
			t.Fatalf("haproxy exited:\n%s", out.String())
		default:
		}
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return url
}

// answer2026 is one JSON-RPC answer of a POST of 2026-07-28.
type answer2026 struct {
	raw    string
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post2026 POSTs one request of 2026-07-28 to base's /mcp with its
// standard headers and returns the answer (JSON, or the SSE stream's
// last message).
func post2026(t *testing.T, base, body, method, name string) answer2026 {
	t.Helper()
	msgs := messages2026(t, base, body, method, name)
	data := msgs[len(msgs)-1]
	a := answer2026{raw: string(data)}
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("POST %s: %q: %v", base, data, err)
	}
	return a
}

// messages2026 POSTs one request of 2026-07-28 to base's /mcp with its
// standard headers and returns every message of the answer: the JSON, or
// the SSE stream's messages, which end with the response.
func messages2026(t *testing.T, base, body, method, name string) [][]byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return [][]byte{data}
	}
	var msgs [][]byte
	for line := range bytes.Lines(data) {
		if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
			msgs = append(msgs, bytes.TrimSpace(d))
		}
	}
	if len(msgs) == 0 {
		t.Fatalf("POST %s: %d, an event stream without a message: %q", base, resp.StatusCode, data)
	}
	return msgs
}

// toolCallsServed sums mcp_gateway_tool_calls_total on a gateway's
// /metrics.
func toolCallsServed(t *testing.T, base string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var n float64
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "mcp_gateway_tool_calls_total{") {
			fields := strings.Fields(line)
			v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
			n += v
		}
	}
	return n
}
