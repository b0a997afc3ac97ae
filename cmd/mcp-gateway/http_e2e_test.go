package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// httpGW is the gateway binary serving --transport http on a free port.
type httpGW struct {
	t      testing.TB
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	stderr *testutil.Buffer
	done   chan error
}

var listenAddr = regexp.MustCompile(`serving on http .*addr=(\S+)`)

// startHTTP starts the gateway on cfg with --transport http --listen
// 127.0.0.1:0 and waits until it listens. It is stopped with SIGINT (Kill
// on Windows) at the end of the test; on Unix a non-zero exit fails it.
func startHTTP(t *testing.T, cfg string, env ...string) *httpGW {
	t.Helper()
	return startHTTPEnv(t, cfg, baseEnv(t, env...))
}

func startHTTPEnv(t testing.TB, cfg string, env []string) *httpGW {
	t.Helper()
	return startHTTPAt(t, "127.0.0.1:0", cfg, env)
}

// startHTTPAt is startHTTPEnv listening on addr.
func startHTTPAt(t testing.TB, addr, cfg string, env []string) *httpGW {
	t.Helper()
	cmd := exec.Command(gatewayBin, "--transport", "http", "--listen", addr, "--config", cfg)
	cmd.Env = env
	return startHTTPCmd(t, cmd)
}

// startHTTPCmd starts cmd, which runs the gateway with --transport http,
// and waits until it listens.
func startHTTPCmd(t testing.TB, cmd *exec.Cmd) *httpGW {
	t.Helper()
	g := &httpGW{t: t, cmd: cmd, stderr: &testutil.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = g.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.done <- cmd.Wait() }()
	t.Cleanup(func() { g.stop() })
	deadline := time.Now().Add(testutil.DefaultTimeout)
	for time.Now().Before(deadline) {
		if m := listenAddr.FindStringSubmatch(g.stderr.String()); m != nil {
			g.base = "http://" + m[1]
			return g
		}
		select {
		case err := <-g.done:
			g.done <- err
			t.Fatalf("gateway exited: %v\n%s", err, g.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("gateway did not listen\n%s", g.stderr)
	return nil
}

// stop interrupts the gateway and checks that it exits 0.
func (g *httpGW) stop() {
	if g.t.Failed() {
		defer g.t.Logf("gateway stderr:\n%s", g.stderr)
	}
	if g.cmd.ProcessState != nil {
		return
	}
	if runtime.GOOS == "windows" || g.cmd.Process.Signal(os.Interrupt) != nil {
		_ = g.cmd.Process.Kill()
		<-g.done
		return
	}
	select {
	case err := <-g.done:
		if err != nil {
			g.t.Errorf("gateway exit: %v\n%s", err, g.stderr)
		}
		g.done <- err
	case <-time.After(20 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
		g.t.Errorf("gateway still running 20s after SIGINT\n%s", g.stderr)
	}
}

func httpConfig(t testing.TB, extra map[string]any, servers ...beServer) string {
	t.Helper()
	gw := map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false}
	for k, v := range extra {
		gw[k] = v
	}
	b, err := json.Marshal(map[string]any{"gateway": gw, "servers": servers})
	if err != nil {
		t.Fatal(err)
	}
	return testutil.TempFile(t, "config.yaml", string(b))
}

// goClient connects go-sdk's client over a transport.
func goClient(t *testing.T, tr mcp.Transport, name string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	// Not a context with a timeout: go-sdk's SSE client keeps the
	// connect context for its event stream.
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callEcho(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	m, _ := res.StructuredContent.(map[string]any)
	return m
}

func TestHTTPStreamableGoClient(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	var mu sync.Mutex
	var progress []float64
	cs := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, "go-client", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	wantTools(t, names, "tb.echo", "tb.slow", "tb.progress")
	if got := callEcho(t, cs, "tb.echo", map[string]any{"x": "y"}); got["x"] != "y" {
		t.Errorf("echo: %v", got)
	}
	p := &mcp.CallToolParams{Name: "tb.progress", Arguments: map[string]any{"steps": 3, "ms": 10}}
	p.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "3 progress notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) == 3 })

	// A cancelled call is cancelled at the backend.
	cctx, ccancel := context.WithCancel(ctx)
	go func() {
		// Cancelled once the call has reached the backend.
		testutil.Poll(testutil.DefaultTimeout, func() bool {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.stats", Arguments: map[string]any{}})
			if err != nil {
				return true
			}
			sc, _ := res.StructuredContent.(map[string]any)
			n, _ := sc["active"].(float64)
			return n > 0
		})
		ccancel()
	}()
	if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "tb.hang", Arguments: map[string]any{}}); err == nil {
		t.Fatal("cancelled hang returned no error")
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the backend saw the cancellation", func() bool {
		st := callEcho(t, cs, "tb.stats", map[string]any{})
		c, _ := st["cancelled"].([]any)
		return len(c) == 1
	})

	// The session ends with DELETE; its id is then unknown (404).
	id := cs.ID()
	if id == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	// Close sends the DELETE; if that failed, the session was never ended
	// and a 200 below would blame the gateway.
	if err := cs.Close(); err != nil {
		t.Fatalf("Close (DELETE of the session): %v", err)
	}
	resp := postMCP(t, g.base+"/mcp", id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST to an ended session: %d, want 404", resp.StatusCode)
	}
}

func postMCP(t *testing.T, u, session, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHTTPSSEGoClient(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	cs := goClient(t, &mcp.SSEClientTransport{Endpoint: g.base + "/sse"}, "sse-client", nil)
	if got := callEcho(t, cs, "tb.echo", map[string]any{"n": 7.0}); got["n"] != 7.0 {
		t.Errorf("echo over SSE: %v", got)
	}
	// strict_names by client: Claude Code gets tb__echo.
	claude := goClient(t, &mcp.SSEClientTransport{Endpoint: g.base + "/sse"}, "claude-code", nil)
	if got := callEcho(t, claude, "tb__echo", map[string]any{"n": 8.0}); got["n"] != 8.0 {
		t.Errorf("strict echo over SSE: %v", got)
	}
}

// TestHTTPManySessions: 100 sessions at once over one set of backends,
// each calling tools; every reply is its own.
func TestHTTPManySessions(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	const n = 100
	var wg sync.WaitGroup
	var bad atomic.Int32
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*testutil.DefaultTimeout)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for j := range 5 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.echo", Arguments: map[string]any{"s": i, "j": j}})
				if err != nil {
					errs <- err
					return
				}
				m, _ := res.StructuredContent.(map[string]any)
				if m["s"] != float64(i) || m["j"] != float64(j) {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if bad.Load() != 0 {
		t.Errorf("%d replies did not match their call", bad.Load())
	}
}

// Stateless requests share the gateway's tool table, which a backend's
// list change replaces: the request after tb.change lists the tool it
// added and can call it.
func TestHTTPStatelessSeesListChange(t *testing.T) {
	t.Parallel()
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"stateless": true}}, tb("tb")))
	post := func(body string) string {
		resp := postMCP(t, g.base+"/mcp", "", body, nil)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, out)
		}
		return string(out)
	}
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if out := post(list); !strings.Contains(out, `"tb.echo"`) || strings.Contains(out, `"tb.added_`) {
		t.Fatalf("tools/list before the change: %s", out)
	}
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tb.change","arguments":{}}}`)
	var added string
	testutil.WaitFor(t, testutil.DefaultTimeout, "a stateless tools/list with the added tool", func() bool {
		_, rest, ok := strings.Cut(post(list), `"name":"tb.added_`)
		added, _, _ = strings.Cut(rest, `"`)
		return ok
	})
	if out := post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tb.added_` + added + `","arguments":{}}}`); !strings.Contains(out, `"result"`) {
		t.Errorf("calling the added tool: %s", out)
	}
}

// TestHTTPStatelessBehindRoundRobin: two stateless gateways behind a
// round-robin reverse proxy serve one go-sdk client.
func TestHTTPStatelessBehindRoundRobin(t *testing.T) {
	cfg := httpConfig(t, map[string]any{"http": map[string]any{"stateless": true}}, tb("tb"))
	a, b := startHTTP(t, cfg), startHTTP(t, cfg)
	var next atomic.Int32
	var hits [2]atomic.Int32
	targets := []string{a.base, b.base}
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := int(next.Add(1)) % 2
		hits[i].Add(1)
		u, _ := url.Parse(targets[i])
		r.SetURL(u)
		r.Out.Host = u.Host
	}})
	defer proxy.Close()
	cs := goClient(t, &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp", DisableStandaloneSSE: true}, "lb-client", nil)
	for i := range 6 {
		if got := callEcho(t, cs, "tb.echo", map[string]any{"i": i}); got["i"] != float64(i) {
			t.Errorf("call %d: %v", i, got)
		}
	}
	if hits[0].Load() == 0 || hits[1].Load() == 0 {
		t.Errorf("requests per gateway: %d, %d; want both used", hits[0].Load(), hits[1].Load())
	}
	// Without a session, a tools/call needs no initialize.
	resp := postMCP(t, a.base+"/mcp", "", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"tb.echo","arguments":{"k":1}}}`, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"structuredContent":{"k":1}`)) {
		t.Errorf("stateless call: %d %s", resp.StatusCode, body)
	}
	if r := getURL(t, a.base+"/mcp", map[string]string{"Accept": "text/event-stream"}); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("stateless GET: %d, want 405", r.StatusCode)
	}
}

func getURL(t *testing.T, u string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type restReply struct {
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result"`
	Error   struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func restCall(t *testing.T, base, body string) (int, restReply) {
	t.Helper()
	resp, err := http.Post(base+"/mcp/call", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r restReply
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("REST reply %q: %v", raw, err)
	}
	return resp.StatusCode, r
}

func TestHTTPRESTStatuses(t *testing.T) {
	slow := tb("tbs")
	slow.TimeoutMS = 300
	dead := tb("dead")
	dead.Restart = "never"
	broken := tb("broken", "-fail-start", "4")
	broken.Restart = "never"
	g := startHTTP(t, httpConfig(t, nil, tb("tb"), slow, dead, broken))

	resp := getURL(t, g.base+"/mcp/tools", nil)
	var list struct {
		Tools []struct {
			Name, Server string
			Timeout      int64
			InputSchema  map[string]any
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /mcp/tools: %d %v", resp.StatusCode, err)
	}
	found := false
	for _, tl := range list.Tools {
		if tl.Name == "tbs.slow" && tl.Server == "tbs" && tl.Timeout == 300 && tl.InputSchema["type"] == "object" {
			found = true
		}
	}
	if !found {
		t.Errorf("GET /mcp/tools lacks tbs.slow with timeout 300: %+v", list.Tools)
	}

	// Crash dead first: its calls then get SERVER_CRASHED.
	restCall(t, g.base, `{"server":"dead","toolName":"crash","input":{}}`)

	cases := []struct {
		body   string
		status int
		code   string
	}{
		{`{"server":"tb","toolName":"echo","input":{"a":[1,2]}}`, 200, ""},
		{`{"name":"tb.echo","arguments":{"b":true}}`, 200, ""},
		{`{"name":"tb.echo","arguments":[1]}`, 400, "VALIDATION_ERROR"},
		{`not json`, 400, "VALIDATION_ERROR"},
		{`{}`, 400, "VALIDATION_ERROR"},
		{`{"server":"tb","toolName":"nope","input":{}}`, 404, "TOOL_NOT_FOUND"},
		{`{"server":"nobody","toolName":"echo"}`, 404, "TOOL_NOT_FOUND"},
		{`{"name":"tb.odd","arguments":{"isError":true}}`, 500, "TOOL_EXECUTION_ERROR"},
		{`{"server":"dead","toolName":"echo","input":{}}`, 503, "SERVER_CRASHED"},
		{`{"server":"broken","toolName":"echo","input":{}}`, 503, "SERVER_NOT_RUNNING"},
		{`{"server":"tbs","toolName":"slow","input":{"ms":5000}}`, 504, "TIMEOUT_ERROR"},
	}
	for _, c := range cases {
		status, r := restCall(t, g.base, c.body)
		if status != c.status || r.Error.Code != c.code || r.Success != (c.status == 200) {
			t.Errorf("%s: %d %+v, want %d %s", c.body, status, r, c.status, c.code)
		}
		if c.status != 200 && c.code != "" && c.body[0] == '{' && c.body != `{}` && r.Error.Details == nil && c.code != "TOOL_NOT_FOUND" {
			t.Errorf("%s: no details", c.body)
		}
	}
	if _, r := restCall(t, g.base, `{"server":"tb","toolName":"echo","input":{"a":[1,2]}}`); string(r.Result) != `{"a":[1,2]}` {
		t.Errorf("result: %s, want the structuredContent", r.Result)
	}
	if _, r := restCall(t, g.base, `{"name":"tbs.slow","arguments":{"ms":1}}`); string(r.Result) != `"slept"` {
		t.Errorf("text result: %s", r.Result)
	}

	if r := getURL(t, g.base+"/healthz", nil); r.StatusCode != 200 {
		t.Errorf("healthz: %d", r.StatusCode)
	}
	st := getURL(t, g.base+"/status", nil)
	var status struct {
		Servers []struct{ Name, State string }
	}
	if err := json.NewDecoder(st.Body).Decode(&status); err != nil || len(status.Servers) != 4 {
		t.Errorf("status: %v %+v", err, status)
	}
	m := getURL(t, g.base+"/metrics", nil)
	body, _ := io.ReadAll(m.Body)
	for _, want := range []string{
		`mcp_gateway_tool_calls_total{outcome="ok",server="tb"}`,
		`mcp_gateway_tool_calls_total{outcome="timeout_error",server="tbs"}`,
		`mcp_gateway_tool_calls_total{outcome="server_crashed",server="dead"}`,
		`mcp_gateway_tool_call_duration_seconds_bucket{outcome="ok",server="tb"`,
		`mcp_gateway_backend_state{server="dead",state="crashed"} 1`,
		`mcp_gateway_backend_restarts_total{server="tb"} 0`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
}

func TestHTTPSecurity(t *testing.T) {
	// The token as read from a file, with its newline: the presented one
	// is trimmed, so the configured one is too.
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"auth_token_env": "GW_TOKEN"}}, tb("tb")), "GW_TOKEN=s3cret\n")
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{"Authorization": "Bearer s3cret"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	cases := []struct {
		name   string
		do     func() *http.Response
		status int
	}{
		{"REST with token", func() *http.Response { return getURL(t, g.base+"/mcp/tools", auth) }, 200},
		{"REST without token", func() *http.Response { return getURL(t, g.base+"/mcp/tools", nil) }, 401},
		{"REST with a wrong token", func() *http.Response {
			return getURL(t, g.base+"/mcp/tools", map[string]string{"Authorization": "Bearer s3creT"})
		}, 401},
		{"MCP without token", func() *http.Response { return postMCP(t, g.base+"/mcp", "", init, nil) }, 401},
		{"MCP with token", func() *http.Response { return postMCP(t, g.base+"/mcp", "", init, auth) }, 200},
		{"healthz needs no token", func() *http.Response { return getURL(t, g.base+"/healthz", nil) }, 200},
		{"foreign Origin on MCP", func() *http.Response {
			return postMCP(t, g.base+"/mcp", "", init, with(map[string]string{"Origin": "https://evil.example"}))
		}, 403},
		{"foreign Origin on REST", func() *http.Response {
			return getURL(t, g.base+"/mcp/tools", with(map[string]string{"Origin": "https://evil.example"}))
		}, 403},
		{"localhost Origin", func() *http.Response {
			return getURL(t, g.base+"/mcp/tools", with(map[string]string{"Origin": "http://localhost:3000"}))
		}, 200},
		{"foreign Host (DNS rebinding)", func() *http.Response {
			return getURL(t, g.base+"/mcp/tools", with(map[string]string{"Host": "evil.example:8000"}))
		}, 403},
		{"SSE without token", func() *http.Response { return getURL(t, g.base+"/sse", nil) }, 401},
		{"body over the limit", func() *http.Response {
			big := `{"name":"tb.echo","arguments":{"s":"` + strings.Repeat("x", 5<<20) + `"}}`
			req, _ := http.NewRequest(http.MethodPost, g.base+"/mcp/call", strings.NewReader(big))
			req.Header.Set("Authorization", "Bearer s3cret")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp
		}, 413},
	}
	for _, c := range cases {
		resp := c.do()
		if resp.StatusCode != c.status {
			body, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: %d, want %d (%s)", c.name, resp.StatusCode, c.status, body)
		}
		if c.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", c.name, resp.Header.Get("WWW-Authenticate"))
		}
	}

	// The token's variable must be set.
	cmd := exec.Command(gatewayBin, "--transport", "http", "--listen", "127.0.0.1:0", "--config",
		httpConfig(t, map[string]any{"http": map[string]any{"auth_token_env": "GW_TOKEN_UNSET"}}))
	cmd.Env = baseEnv(t)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "GW_TOKEN_UNSET") {
		t.Errorf("unset token variable: %v %s", err, out)
	}
}

func TestHTTPDefaultOriginRules(t *testing.T) {
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"allowed_origins": []string{"https://app.example"}}}, tb("tb")))
	for origin, want := range map[string]int{"https://app.example": 200, "http://localhost:3000": 403, "": 200} {
		hdr := map[string]string{}
		if origin != "" {
			hdr["Origin"] = origin
		}
		if r := getURL(t, g.base+"/healthz", hdr); r.StatusCode != want {
			t.Errorf("Origin %q: %d, want %d", origin, r.StatusCode, want)
		}
	}
}

func TestHTTPShutdownFinishesCalls(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to another process on Windows")
	}
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	got := make(chan string, 1)
	go func() {
		resp, err := http.Post(g.base+"/mcp/call", "application/json", strings.NewReader(`{"name":"tb.slow","arguments":{"ms":700}}`))
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(b))
	}()
	testutil.WaitFor(t, testutil.DefaultTimeout, "the call at the backend", func() bool {
		r, err := http.Post(g.base+"/mcp/call", "application/json", strings.NewReader(`{"name":"tb.stats","arguments":{}}`))
		if err != nil {
			return false
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return bytes.Contains(b, []byte(`"active":1`))
	})
	if err := g.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r != `200 {"result":"slept","success":true}` {
			t.Errorf("in-flight call during shutdown: %s", r)
		}
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("no reply")
	}
	g.stop()
}

func getStatus(t *testing.T, g *httpGW) string {
	r := getURL(t, g.base+"/status", nil)
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// TestHTTPTypeScriptClients: the TypeScript SDK's
// StreamableHTTPClientTransport and SSEClientTransport through the real
// binary (testdata/http_client.mjs). noget is the Streamable HTTP client
// without the standalone GET stream: a call's progress arrives on the
// call's own POST stream.
func TestHTTPTypeScriptClients(t *testing.T) {
	root := npmPeers(t)
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	for _, c := range []struct{ kind, path string }{{"streamable", "/mcp"}, {"noget", "/mcp"}, {"sse", "/sse"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*testutil.DefaultTimeout)
		cmd := exec.CommandContext(ctx, "node", testdataPath("http_client.mjs"), c.kind, g.base+c.path)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.kind, err, stderr.String())
		}
		var res struct {
			Tools     []string
			Echo      map[string]any
			Progress  []float64
			SessionID *string
			Gets      int
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s: %v: %s", c.kind, err, out)
		}
		wantTools(t, res.Tools, "tb.echo", "tb.progress")
		if res.Echo["kind"] != c.kind || res.Echo["n"] != 42.0 {
			t.Errorf("%s: echo %v", c.kind, res.Echo)
		}
		if len(res.Progress) != 2 {
			t.Errorf("%s: progress %v, want 2 notifications", c.kind, res.Progress)
		}
		if c.kind != "sse" && (res.SessionID == nil || *res.SessionID == "") {
			t.Errorf("%s: no session id", c.kind)
		}
		if c.kind == "noget" && res.Gets == 0 {
			t.Errorf("noget: the client never tried its GET stream, so the test proves nothing")
		}
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the sessions to end", func() bool { return strings.Contains(getStatus(t, g), `"sessions": 0`) })
}

// sseEvent is one event of a text/event-stream.
type sseEvent struct{ id, data string }

// readEvents reads events from an event stream until n have arrived.
func readEvents(t *testing.T, r io.Reader, n int) []sseEvent {
	t.Helper()
	return readEventsTo(t, r, func(evs []sseEvent) bool { return len(evs) >= n })
}

// readEventsTo reads events from an event stream until done says that
// those read so far are enough.
func readEventsTo(t *testing.T, r io.Reader, done func([]sseEvent) bool) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream ended after %d events: %v", len(out), err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		case line == "" && cur.data != "":
			out = append(out, cur)
			cur = sseEvent{}
			if done(out) {
				return out
			}
		}
	}
}

// TestHTTPProgressOnThePOSTStream: a client that never opens the GET
// stream gets a call's progress on the call's own POST stream, before its
// response; the stream then ends. Stateless mode too, where there is no
// GET stream at all.
func TestHTTPProgressOnThePOSTStream(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"stateless": stateless}}, tb("tb")))
			sid := ""
			if !stateless {
				sid = initRaw(t, g)
			}
			call := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"tb.progress","arguments":{"steps":2,"ms":10},"_meta":{"progressToken":7}}}`,
				map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
			defer call.Body.Close()
			if ct := call.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("POST stream content type %q", ct)
			}
			evs := readEvents(t, call.Body, 3)
			for i, want := range []string{`"progress":1`, `"progress":2`, `"id":"c1"`} {
				if !strings.Contains(evs[i].data, want) {
					t.Errorf("event %d: %s, want %s", i, evs[i].data, want)
				}
			}
			for _, ev := range evs[:2] {
				if !strings.Contains(ev.data, `"progressToken":7`) {
					t.Errorf("progress without the call's token: %s", ev.data)
				}
			}
			if rest, err := io.ReadAll(call.Body); err != nil || len(bytes.TrimSpace(rest)) != 0 {
				t.Errorf("after the response: %q, %v; want the stream to end", rest, err)
			}
		})
	}
}

// TestHTTPProgressGoClientWithoutGET: go-sdk's client with its standalone
// stream disabled gets progress (on the POST stream).
func TestHTTPProgressGoClientWithoutGET(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	var mu sync.Mutex
	var got []float64
	cs := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp", DisableStandaloneSSE: true}, "noget",
		&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params.Progress)
			mu.Unlock()
		}})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: "tb.progress", Arguments: map[string]any{"steps": 3, "ms": 10}}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	// go-sdk's client runs its notification handlers apart from the
	// responses it reads: the last may run after CallTool has returned.
	// (The gateway's order, progress before the result, is checked on the
	// wire in TestHTTPProgressOnThePOSTStream.)
	testutil.WaitFor(t, testutil.DefaultTimeout, "3 progress notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("progress %v, want 1, 2, 3", got)
	}
}

// initRaw opens a session with a raw HTTP client: initialize and
// initialized. It returns the session id.
func initRaw(t *testing.T, g *httpGW) string {
	t.Helper()
	return initRawCaps(t, g, `{}`)
}

// initRawCaps is initRaw for a client that declares caps.
func initRawCaps(t *testing.T, g *httpGW, caps string) string {
	t.Helper()
	return initRawURL(t, g.base+"/mcp", caps)
}

// initRawURL is initRawCaps at the Streamable HTTP endpoint u.
func initRawURL(t *testing.T, u, caps string) string {
	t.Helper()
	sid, status := initRawStatus(t, u, caps)
	if status != http.StatusAccepted {
		t.Fatalf("initialized: %d", status)
	}
	return sid
}

// initRawStatus initializes a session at u and returns its id and the
// status of the POST of notifications/initialized (404 when the session
// expired before it came).
func initRawStatus(t *testing.T, u, caps string) (sid string, status int) {
	t.Helper()
	resp := postMCP(t, u, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	sid = resp.Header.Get("Mcp-Session-Id")
	// One JSON response if answered within primeAfter, else an event
	// stream.
	if body, err := io.ReadAll(resp.Body); err != nil || !strings.Contains(string(body), `"serverInfo"`) {
		t.Fatalf("initialize: %s %q, %v", resp.Header.Get("Content-Type"), body, err)
	}
	resp.Body.Close()
	return sid, postMCP(t, u, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil).StatusCode
}

// TestHTTPResumeWithLastEventID: a client that loses a call's stream
// reconnects with Last-Event-ID and gets the events it missed, once, and
// the rest of the stream.
func TestHTTPResumeWithLastEventID(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	sid := initRaw(t, g)
	get := func(last string) *http.Response {
		return getURL(t, g.base+"/mcp", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": sid, "Last-Event-ID": last})
	}
	call := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tb.progress","arguments":{"steps":3,"ms":150},"_meta":{"progressToken":"p"}}}`, nil)
	first := readEvents(t, call.Body, 1)
	call.Body.Close() // the connection drops after one progress event
	if first[0].id == "" || !strings.Contains(first[0].data, `"progress":1`) {
		t.Fatalf("first event: %+v", first[0])
	}
	// Until the server notices the dropped connection, the stream still
	// has a reader and a resume is refused: retry, as clients do.
	var resumed *http.Response
	testutil.WaitFor(t, testutil.DefaultTimeout, "a resumed stream", func() bool {
		resumed = get(first[0].id)
		return resumed.StatusCode == http.StatusOK
	})
	defer resumed.Body.Close()
	rest := readEvents(t, resumed.Body, 3)
	if !strings.Contains(rest[0].data, `"progress":2`) || !strings.Contains(rest[1].data, `"progress":3`) || !strings.Contains(rest[2].data, `"id":2`) {
		t.Errorf("replayed: %+v", rest)
	}
	if extra, _ := io.ReadAll(resumed.Body); len(bytes.TrimSpace(extra)) != 0 {
		t.Errorf("after the response: %q", extra)
	}
}

// TestHTTPIdleSessionsExpire: with gateway.http.session_idle_timeout_ms, a
// call that lasts longer than the timeout keeps its session (a call in
// flight is not idle); once idle, the session ends and its id gets 404.
//
// The session is idle between the client's requests too: a client slower
// than the timeout there (a test process with both cores busy) loses its
// session before its next request, as it should, and gets 404 for it; the
// test then starts over with a new session. A call the session accepted
// must get its result: its stream ending without one is the failure.
func TestHTTPIdleSessionsExpire(t *testing.T) {
	g := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"session_idle_timeout_ms": 300}}, tb("tb")))
	var sid string
	testutil.WaitFor(t, testutil.DefaultTimeout, "a session that reaches its call before it is idle for 300 ms", func() bool {
		var status int
		if sid, status = initRawStatus(t, g.base+"/mcp", `{}`); status == http.StatusNotFound {
			t.Logf("session %s expired before notifications/initialized came: starting over", sid)
			return false
		} else if status != http.StatusAccepted {
			t.Fatalf("initialized: %d", status)
		}
		call := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tb.progress","arguments":{"steps":5,"ms":200}}}`, nil)
		defer call.Body.Close()
		if call.StatusCode == http.StatusNotFound {
			t.Logf("session %s expired before its call came: starting over", sid)
			return false
		}
		// The answer: one JSON response, or the last event of an event
		// stream (readEventsTo fails the test if the stream ends first).
		var res string
		if strings.HasPrefix(call.Header.Get("Content-Type"), "text/event-stream") {
			evs := readEventsTo(t, call.Body, func(evs []sseEvent) bool { return strings.Contains(evs[len(evs)-1].data, `"id":2`) })
			res = evs[len(evs)-1].data
		} else {
			body, _ := io.ReadAll(call.Body)
			res = string(body)
		}
		if call.StatusCode != http.StatusOK || !strings.Contains(res, `"id":2`) || !strings.Contains(res, `"result"`) || strings.Contains(res, `"isError":true`) {
			t.Fatalf("a call of 1 s with a 300 ms idle timeout: %d %q", call.StatusCode, res)
		}
		return true
	})
	// Watched on /status: a request to the session would keep it.
	testutil.WaitFor(t, testutil.DefaultTimeout, "the idle session to expire", func() bool { return strings.Contains(getStatus(t, g), `"sessions": 0`) })
	if r := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("expired session: %d, want 404", r.StatusCode)
	}
}

// TestHTTPCancelledCallStillAnEventStream: a call cancelled before its
// stream started (2025-06-18 has no priming event) is answered with an
// empty event stream, not a 200 without a Content-Type, which clients
// reject.
func TestHTTPCancelledCallStillAnEventStream(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb")))
	sid := initRaw(t, g)
	hdr := map[string]string{"Mcp-Protocol-Version": "2025-06-18"}
	req, _ := http.NewRequest(http.MethodPost, g.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"tb.hang","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	type answer struct {
		resp *http.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req) // returns once the headers are written
		answered <- answer{resp, err}
	}()
	testutil.WaitFor(t, testutil.DefaultTimeout, "the call at the backend", func() bool {
		r := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"tb.stats","arguments":{}}}`, hdr)
		body, _ := io.ReadAll(r.Body)
		return strings.Contains(string(body), `"active":1`)
	})
	if r := postMCP(t, g.base+"/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h"}}`, hdr); r.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d", r.StatusCode)
	}
	a := <-answered
	if a.err != nil {
		t.Fatal(a.err)
	}
	defer a.resp.Body.Close()
	body, err := io.ReadAll(a.resp.Body)
	if ct := a.resp.Header.Get("Content-Type"); a.resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") || err != nil || len(bytes.TrimSpace(body)) != 0 {
		t.Errorf("the cancelled call's POST: %d, Content-Type %q, body %q, %v; want 200, an empty event stream", a.resp.StatusCode, ct, body, err)
	}
}
