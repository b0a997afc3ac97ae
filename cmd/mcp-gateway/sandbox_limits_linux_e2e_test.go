//go:build linux

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// needCgroups skips a test where the machine cannot make the servers'
// cgroups (never in CI, where it must).
func needCgroups(t *testing.T) {
	t.Helper()
	if !cgroupsHere(t) {
		t.Skipf("no cgroup limits here: %s", backends.CgroupLimitsMissing())
	}
}

// cgroupsHere reports whether the machine can make the servers' cgroups;
// in CI it must.
func cgroupsHere(t *testing.T) bool {
	t.Helper()
	why := backends.CgroupLimitsMissing()
	if why != "" && os.Getenv("CI") == "true" {
		t.Fatalf("no cgroup limits in CI: %s", why)
	}
	return why == ""
}

// TestSandboxLimitsThroughTheBinary: a confined server's fork loop
// stops at its processes with EAGAIN; one that allocates past its
// memory_mb is killed in its cgroup; the call fails
// with "MCP server 'x' exceeded its memory limit (64 MB)", /status shows
// that as its error, restart: on-failure brings it back and it answers
// again, and the gateway's other server is not disturbed.
func TestSandboxLimitsThroughTheBinary(t *testing.T) {
	t.Parallel()
	env, _ := confinable(t)
	needCgroups(t)
	sb := map[string]any{"mode": "enforce", "memory_mb": 64, "processes": 48}
	big := beServer{Name: "big", Command: backendBin, Args: []string{"-hostile"}, Restart: "never", Sandbox: sb}
	again := beServer{Name: "again", Command: backendBin, Args: []string{"-hostile"}, Restart: "on-failure", Sandbox: sb}
	g := startHTTPEnv(t, httpConfig(t, nil, big, again, tb("other")), env)
	cs := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, "e2e", nil)
	call := func(name string, args map[string]any) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "", err
		}
		if len(res.Content) != 1 {
			t.Fatalf("%s: %+v", name, res)
		}
		text, _ := res.Content[0].(*mcp.TextContent)
		return text.Text, nil
	}
	type server struct {
		Name, State, Error string
		Restarts           int
	}
	status := func() map[string]server {
		resp, err := http.Get(g.base + "/status")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc struct{ Servers []server }
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		m := map[string]server{}
		for _, s := range doc.Servers {
			m[s.Name] = s
		}
		return m
	}

	// A fork loop stops at processes (the server's own threads count).
	ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big.fork", Arguments: map[string]any{"max": "100"}})
	if err != nil || !res.IsError || len(res.Content) != 1 {
		t.Fatalf("big.fork: %+v, %v", res, err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "resource temporarily unavailable") {
		t.Errorf("a fork loop under processes 48: %q, want EAGAIN", text)
	}
	if text, err := call("other.echo", map[string]any{"after": "fork"}); err != nil {
		t.Errorf("other after the fork loop: %q, %v", text, err)
	}

	for _, name := range []string{"big", "again"} {
		if text, err := call(name+".alloc", map[string]any{"mb": "16"}); err != nil || text != "allocated 16 MB" {
			t.Fatalf("%s: 16 MB under a limit of 64: %q, %v", name, text, err)
		}
		_, err := call(name+".alloc", map[string]any{"mb": "256"})
		if want := "MCP server '" + name + "' exceeded its memory limit (64 MB)"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: 256 MB under a limit of 64: %v, want %q", name, err, want)
		}
	}
	if s := status()["big"]; s.State != "crashed" || s.Error != "exceeded its memory limit (64 MB)" {
		t.Errorf("big's status: %+v", s)
	}
	if text, err := call("other.echo", map[string]any{"still": "here"}); err != nil {
		t.Errorf("other after the kills: %q, %v", text, err)
	}
	// restart: on-failure, after the gateway's backoff.
	testutil.WaitFor(t, testutil.DefaultTimeout, "again restarted", func() bool {
		s := status()["again"]
		return s.State == "ready" && s.Restarts == 1
	})
	if text, err := call("again.alloc", map[string]any{"mb": "16"}); err != nil || text != "allocated 16 MB" {
		t.Errorf("again after its restart: %q, %v", text, err)
	}
}
