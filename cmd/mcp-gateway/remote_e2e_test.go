package main

// Remote backends (url: servers) through the real binary, against real
// servers on loopback: a second mcp-gateway --transport http with a bearer
// token (two hops, with testbackend's scripted tools behind it), go-sdk's
// conformance everything-server, and the npm server-everything in its
// streamableHttp and sse modes.

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// freeAddr returns a loopback address nothing listens on, for a server the
// test starts in another process. The port is chosen below the ephemeral
// ranges (Linux 32768 and up, macOS and Windows 49152 and up), where the
// listeners of parallel tests (port 0) and outgoing connections never land:
// a port from port 0, closed again, could be taken by one of those before
// the server binds it, and the test would then talk to the wrong server.
func freeAddr(t testing.TB) string {
	t.Helper()
	for range 100 {
		port := 20000 + rand.IntN(12000)
		if _, taken := handedOut.LoadOrStore(port, true); taken {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		return l.Addr().String()
	}
	t.Fatal("no free port in 20000-31999")
	return ""
}

// handedOut are the ports freeAddr has returned in this test binary.
var handedOut sync.Map

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	testutil.WaitFor(t, testutil.DefaultTimeout, addr+" listening", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

// remoteStatus runs `status --json` on cfg and returns the servers.
func remoteStatus(t *testing.T, env []string, cfg string) []statusEntry {
	t.Helper()
	out, errOut, _ := runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var st struct{ Servers []statusEntry }
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status: %v\n%s\n%s", err, out, errOut)
	}
	if strings.Contains(errOut, "nope") || strings.Contains(errOut, "s3cret") {
		t.Errorf("a header value was logged:\n%s", errOut)
	}
	return st.Servers
}

type statusEntry struct{ Name, State, Error string }

// startServer runs a server process for the test's duration.
func startServer(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var stderr testutil.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), stderr.String())
		}
	})
}

// A remote gateway behind a bearer token is forwarded like a local server:
// results byte for byte, progress under the client's token, a timeout sends
// a cancel, a client's cancel reaches the far backend, list_changed comes
// back; a wrong token shows 401 Unauthorized in status, and the header is
// masked in --show-config.
func TestRemoteTwoHops(t *testing.T) {
	t.Parallel()
	back := startHTTP(t, httpConfig(t, map[string]any{"http": map[string]any{"auth_token_env": "GW_TOKEN"}}, tb("tb")), "GW_TOKEN=s3cret")
	far := beServer{Name: "far", URL: back.base + "/mcp", Headers: map[string]string{"Authorization": "Bearer ${FAR_TOKEN}"}, TimeoutMS: 3000}
	wrong := beServer{Name: "wrong", URL: back.base + "/mcp", Headers: map[string]string{"Authorization": "Bearer nope"}, Restart: "never"}
	cfg := beConfig(t, tb("local"), far, wrong)
	s := startRaw(t, cfg, "e2e", "FAR_TOKEN=s3cret")
	wantTools(t, s.toolsList(), prefixed("far.tb", ".", tbTools...)...)

	t.Run("results byte for byte", func(t *testing.T) {
		local := s.callTool("local.odd", `{}`).Member("result")
		remote := s.callTool("far.tb.odd", `{}`).Member("result")
		if len(local) == 0 || !bytes.Equal(local, remote) {
			t.Errorf("through two gateways:\n%s\nlocal:\n%s", remote, local)
		}
	})

	t.Run("progress under the client's token", func(t *testing.T) {
		mark := s.Mark()
		r := s.Call("tools/call", `{"name":"far.tb.progress","arguments":{"steps":3,"ms":20},"_meta":{"progressToken":"tok-7"}}`)
		r.Result(t)
		// The far gateway sends progress on its standalone stream and the
		// result on the call's own, so the last step may lose the race to
		// the result (and is then dropped: nothing comes after a result).
		notes := s.Since(mark, "notifications/progress")
		if len(notes) == 0 || len(notes) > 3 {
			t.Fatalf("%d progress notifications, want 1 to 3: %v", len(notes), notes)
		}
		for _, n := range notes {
			if p, _ := n.Map()["params"].(map[string]any); p["progressToken"] != "tok-7" {
				t.Errorf("progress %s", n)
			}
		}
	})

	nCancelled := func() int { return len(cancelled(s.structured("far.tb.stats", `{}`))) }

	t.Run("timeout sends a cancel", func(t *testing.T) {
		before := nCancelled()
		// hang never answers: -32001 is the timeout's.
		code, msg, data := s.callTool("far.tb.hang", `{}`).Error(t)
		if code != -32001 || data["server"] != "far" {
			t.Errorf("hang: %d %q %v", code, msg, data)
		}
		testutil.WaitFor(t, testutil.DefaultTimeout, "the far backend to see the cancel", func() bool { return nCancelled() > before })
	})

	t.Run("the client's cancel reaches the far backend", func(t *testing.T) {
		before := nCancelled()
		mark := s.Mark()
		id := s.Request("tools/call", `{"name":"far.tb.progress","arguments":{"steps":600,"ms":50},"_meta":{"progressToken":"c"}}`)
		s.WaitNote(mark, "notifications/progress", testutil.DefaultTimeout) // it runs on the far side
		s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
		testutil.WaitFor(t, testutil.DefaultTimeout, "the far backend to see the cancel", func() bool { return nCancelled() > before })
	})

	t.Run("list_changed", func(t *testing.T) {
		mark := s.Mark()
		s.callTool("far.tb.change", `{}`).Result(t)
		s.WaitNote(mark, "notifications/tools/list_changed", testutil.DefaultTimeout)
		testutil.WaitFor(t, testutil.DefaultTimeout, "the added tool", func() bool {
			return len(withPrefix(s.toolsList(), "far.tb.added_")) > 0
		})
	})

	t.Run("a wrong token", func(t *testing.T) {
		found := false
		for _, x := range remoteStatus(t, baseEnv(t, "FAR_TOKEN=s3cret"), cfg) {
			switch x.Name {
			case "wrong":
				found = true
				if x.State != "failed" || !strings.Contains(x.Error, "401 Unauthorized") {
					t.Errorf("wrong: %+v", x)
				}
			case "far":
				if x.State != "ready" {
					t.Errorf("far: %+v", x)
				}
			}
		}
		if !found {
			t.Error("no wrong in status")
		}
	})

	t.Run("headers masked in --show-config", func(t *testing.T) {
		_, errOut, code := runCLIEnv(t, baseEnv(t, "FAR_TOKEN=s3cret"), "--show-config", "--config", cfg)
		if code != 0 || strings.Contains(errOut, "s3cret") || strings.Contains(errOut, "nope") || !strings.Contains(errOut, `"Authorization": "***"`) {
			t.Errorf("--show-config (exit %d):\n%s", code, errOut)
		}
	})
	if strings.Contains(s.Stderr.String(), "s3cret") {
		t.Errorf("the token was logged:\n%s", s.Stderr)
	}
}

// A remote backend's server-to-client requests (sampling) reach the client
// and its answer goes back, across two gateways.
func TestRemoteSampling(t *testing.T) {
	t.Parallel()
	back := startHTTP(t, httpConfig(t, nil, tb("tb")))
	var mu sync.Mutex
	var sampled []string
	cs := startSDK(t, beConfig(t, beServer{Name: "far", URL: back.base + "/mcp"}), &mcp.ClientOptions{
		//lint:ignore SA1019 sampling is deprecated from protocol 2026-07-28 on; 2025-11-25 backends still use it and the gateway forwards it.
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			sampled = append(sampled, req.Params.Messages[0].Content.(*mcp.TextContent).Text)
			mu.Unlock()
			//lint:ignore SA1019 as above
			return &mcp.CreateMessageResult{Model: "e2e-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
	})
	res, err := cs.CallTool(beCtx(t), &mcp.CallToolParams{Name: "far.tb.sample", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if res.IsError || sc["model"] != "e2e-model" {
		t.Errorf("far.tb.sample = %+v", sc)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sampled) != 1 || sampled[0] != "hi" {
		t.Errorf("sampled %q", sampled)
	}
}

// A remote that dies fails the call in flight at once with -32000, its
// calls fail while it is down, and it is used again, with a fresh session,
// once it is back.
func TestRemoteDiesAndComesBack(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	backCfg := httpConfig(t, nil, tb("tb"))
	back := startHTTPAt(t, addr, backCfg, baseEnv(t))
	s := startRaw(t, beConfig(t, beServer{Name: "far", URL: "http://" + addr + "/mcp"}), "e2e")
	s.structured("far.tb.echo", `{"a":1}`)

	mark := s.Mark()
	id := s.Request("tools/call", `{"name":"far.tb.progress","arguments":{"steps":600,"ms":50},"_meta":{"progressToken":"d"}}`)
	s.WaitNote(mark, "notifications/progress", testutil.DefaultTimeout)
	_ = back.cmd.Process.Kill()
	back.done <- <-back.done
	// The call (30 s of progress) ends with the remote's death, not its own.
	code, msg, data := s.Await(id, testutil.DefaultTimeout).Error(t)
	if code != -32000 || data["server"] != "far" {
		t.Errorf("in flight: %d %q %v", code, msg, data)
	}
	code, msg, data = s.callTool("far.tb.echo", `{}`).Error(t)
	if code != -32000 || data["server"] != "far" {
		t.Errorf("while down: %d %q %v", code, msg, data)
	}

	startHTTPAt(t, addr, backCfg, baseEnv(t))
	testutil.WaitFor(t, testutil.DefaultTimeout, "the remote back", func() bool {
		return s.callTool("far.tb.echo", `{"b":2}`).Map()["result"] != nil
	})
}

// A remote that accepts connections but never answers fails its start
// after gateway.start_limit_ms, like a child that never initializes.
func TestRemoteHangs(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { close(release); srv.Close() })

	cfg := testutil.TempFile(t, "config.yaml", `{"gateway":{"answer_tools":false,"start_limit_ms":1000,"startup_timeout_ms":5000,"first_start_wait_ms":5000},
"servers":[{"name":"stuck","url":"http://`+l.Addr().String()+`/mcp","restart":"never"}]}`)
	st := remoteStatus(t, baseEnv(t), cfg)
	if len(st) != 1 {
		t.Fatalf("status: %+v", st)
	}
	if st[0].State != "failed" || !strings.Contains(st[0].Error, "start timed out") {
		t.Errorf("stuck: %+v", st[0])
	}
}

// Real remote servers: go-sdk's conformance everything-server (stateless
// and stateful Streamable HTTP) and the npm server-everything over
// Streamable HTTP and legacy SSE (by URL, and by falling back from
// Streamable HTTP when the server refuses it).
func TestRemoteRealServers(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	root := npmPeers(t)
	everything, err := testutil.Build("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", "")
	if err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t)
	goless, gofull := freeAddr(t), freeAddr(t)
	startServer(t, env, everything, "-http", goless)
	startServer(t, env, everything, "-http", gofull, "-stateless=false")
	script := filepath.Join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("npm server-everything: %v (run npm ci)", err)
	}
	npmHTTP, npmSSE := freeAddr(t), freeAddr(t)
	port := func(a string) string { _, p, _ := net.SplitHostPort(a); return p }
	startServer(t, append(env, "PORT="+port(npmHTTP)), node, script, "streamableHttp")
	startServer(t, append(env, "PORT="+port(npmSSE)), node, script, "sse")
	for _, a := range []string{goless, gofull, npmHTTP, npmSSE} {
		waitListening(t, a)
	}

	s := startRaw(t, beConfig(t,
		beServer{Name: "gostateless", URL: "http://" + goless + "/mcp"},
		beServer{Name: "gostateful", URL: "http://" + gofull},
		beServer{Name: "npmhttp", URL: "http://" + npmHTTP + "/mcp"},
		beServer{Name: "npmsse", URL: "http://" + npmSSE + "/sse"},
		beServer{Name: "npmfallback", URL: "http://" + npmSSE + "/sse", Type: "http"},
	), "e2e")
	names := s.toolsList()
	for _, srv := range []string{"gostateless", "gostateful"} {
		wantTools(t, names, srv+".test_simple_text")
		r := s.callTool(srv+".test_simple_text", `{}`)
		if c, _ := r.Result(t)["content"].([]any); len(c) != 1 {
			t.Errorf("%s: %s", srv, r)
		}
	}
	for _, srv := range []string{"npmhttp", "npmsse", "npmfallback"} {
		wantTools(t, names, srv+".echo")
		r := s.callTool(srv+".echo", `{"message":"hi"}`)
		if !strings.Contains(string(r.Raw), "Echo: hi") {
			t.Errorf("%s: %s", srv, r)
		}
	}
	// A prompt and a resource of a remote backend.
	if r := s.Call("prompts/get", `{"name":"gostateful.test_simple_prompt"}`); r.Map()["result"] == nil {
		t.Errorf("prompts/get: %s", r)
	}
	if r := s.Call("resources/read", `{"uri":"test://static-text"}`); r.Map()["result"] == nil {
		t.Errorf("resources/read: %s", r)
	}
}
