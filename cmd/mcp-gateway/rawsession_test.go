package main

// The raw client of the end-to-end tests: configurations of testbackend
// servers, a session that speaks line-delimited JSON-RPC to the binary (to
// see exact bytes, ids and notifications; built on backends/testutil), a
// go-sdk session, and the checks the suites share.

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// beServer is one servers: entry. Configs are written as JSON (valid YAML).
type beServer struct {
	Name      string            `json:"name"`
	Command   string            `json:"command,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Type      string            `json:"type,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	TimeoutMS int               `json:"timeout_ms,omitempty"`
	Restart   string            `json:"restart,omitempty"`
	Tools     *beFilter         `json:"tools,omitempty"`
	Inherit   bool              `json:"inherit_env,omitempty"`
	OAuth     map[string]any    `json:"oauth,omitempty"`
	Protocol  string            `json:"protocol,omitempty"`
	Sandbox   map[string]any    `json:"sandbox,omitempty"`
	Upstream  map[string]any    `json:"upstream_auth,omitempty"`
}

type beFilter struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// tb is a testbackend server entry.
func tb(name string, args ...string) beServer {
	return beServer{Name: name, Command: backendBin, Args: args}
}

// beConfig writes a config with these servers and no answer tools.
func beConfig(t testing.TB, servers ...beServer) string {
	t.Helper()
	cfg := map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false},
		"servers": servers,
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return testutil.TempFile(t, "config.yaml", string(b))
}

// startRaw starts the gateway on cfg and initializes as clientName.
func startRaw(t *testing.T, cfg, clientName string, env ...string) *proc {
	t.Helper()
	s, _ := initSession(t, startGateway(t, baseEnv(t, env...), "--stdio", "--config", cfg), clientName, "{}")
	return s
}

// initSession completes the handshake of s as clientName with
// capabilities caps; it returns s and the answer to initialize.
func initSession(t *testing.T, s *proc, clientName, caps string) (*proc, testutil.Msg) {
	t.Helper()
	init := s.Call("initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":`+strconv.Quote(clientName)+`,"version":"1"}}`)
	if init.Map()["result"] == nil {
		t.Fatalf("initialize: %s", init)
	}
	s.Send(initializedMsg)
	return s, init
}

func (s *proc) callTool(name, args string) testutil.Msg {
	s.t.Helper()
	return s.Call("tools/call", `{"name":`+strconv.Quote(name)+`,"arguments":`+args+`}`)
}

// toolsList returns the names of tools/list.
func (s *proc) toolsList() []string {
	s.t.Helper()
	return toolNames(s.t, s.Call("tools/list", `{}`).Map())
}

// structured returns a successful tools/call result's structuredContent.
func (s *proc) structured(name, args string) map[string]any {
	s.t.Helper()
	return structuredContent(s.t, s.callTool(name, args))
}

// structuredContent returns the structuredContent of r, a successful
// tools/call response.
func structuredContent(t testing.TB, r testutil.Msg) map[string]any {
	t.Helper()
	res := r.Result(t)
	if res["isError"] == true {
		t.Fatalf("isError result %s", r)
	}
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structuredContent in %s", r)
	}
	return sc
}

func wantTools(t *testing.T, names []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("tools/list lacks %s: %v", w, names)
		}
	}
}

func wantNoTools(t *testing.T, names []string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if slices.Contains(names, w) {
			t.Errorf("tools/list has %s: %v", w, names)
		}
	}
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// tbTools are testbackend's own tools.
var tbTools = []string{"echo", "crash", "hang", "slow", "progress", "big", "odd", "change", "sample", "log", "stats", "deaf"}

func prefixed(prefix, sep string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + sep + n
	}
	return out
}

// wantNotRunning checks a -32000 error of docs/errors.md.
func wantNotRunning(t *testing.T, code int, msg string, data map[string]any, server, state, reason, tailLine string) {
	t.Helper()
	want := "MCP server '" + server + "' is not running"
	if state == "crashed" {
		want = "MCP server '" + server + "' crashed: " + reason
	}
	if r, _ := data["reason"].(string); code != -32000 || msg != want || data["server"] != server ||
		state != "" && data["state"] != state || !strings.Contains(r, reason) {
		t.Errorf("error %d %q, data %v; want -32000 %q, data.server %s, data.state %s, data.reason with %q",
			code, msg, data, want, server, state, reason)
	}
	tail, ok := data["stderr_tail"].([]any)
	if !ok {
		t.Errorf("data.stderr_tail = %#v, want an array", data["stderr_tail"])
	} else if tailLine != "" && !slices.ContainsFunc(tail, func(l any) bool { return strings.Contains(fmt.Sprint(l), tailLine) }) {
		t.Errorf("data.stderr_tail = %v, want a line with %q", tail, tailLine)
	}
}

// cancelled is testbackend stats' list of cancelled request ids (null when
// there are none).
func cancelled(stats map[string]any) []any {
	l, _ := stats["cancelled"].([]any)
	return l
}

// testdataPath is the absolute path of testdata/name.
func testdataPath(name string) string {
	p, _ := filepath.Abs(filepath.Join("testdata", name)) // fails only without a working directory
	return p
}

// needNode returns the path of node; the tests that need it fail without
// it. Under -short they are skipped: real Node clients, servers and
// browsers run in the full suite (scripts/test), and -short is the quick
// loop of in-process and Go-only binary tests.
func needNode(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: real Node clients and servers run in the full suite (scripts/test)")
	}
	p, err := exec.LookPath("node")
	if err != nil {
		missing(t, fmt.Sprintf("node (Node 20+) is required for this test: %v", err))
	}
	return p
}

// startSDK connects a go-sdk client (protocol 2025-11-25) to the binary.
func startSDK(t *testing.T, cfg string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return startSDKVersion(t, cfg, opts, "2025-11-25")
}

// startSDKVersion is startSDK with the client speaking version (a client
// of 2026-07-28 asks server/discover and has no handshake), and more
// arguments for the gateway.
func startSDKVersion(t *testing.T, cfg string, opts *mcp.ClientOptions, version string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(gatewayBin, append([]string{"--stdio", "--config", cfg}, args...)...)
	cmd.Env = baseEnv(t)
	stderr := &testutil.Buffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-go", Version: "1"}, opts)
	cs, err := client.Connect(beCtx(t), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", stderr)
		}
	})
	return cs
}

func sdkToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(beCtx(t), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// beCtx is a context for one client operation, bounded by
// testutil.DefaultTimeout.
func beCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	t.Cleanup(cancel)
	return ctx
}
