package main

//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, but backends still send it and the gateway forwards it.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What go-sdk's everything-server answers to test_missing_capability,
// which reads the client's capabilities from the request's _meta in
// 2026-07-28: executed when they declare sampling, else -32021.
const (
	capsSampling = "Client declared the sampling capability; tool executed."
	capsMissing  = "sampling capability required but not declared by client"
)

// TestBackendToldTheCallersCapabilities: a backend of 2026-07-28 is told,
// in each request's _meta, the capabilities of the client that sent it —
// not the ones the gateway could relay, which the backend would then ask
// of a client that cannot answer — over stdio, Streamable HTTP sessions
// (two at once, one with sampling and one without), the HTTP front's
// stateless mode (nothing can be asked there), legacy SSE, REST and the
// command line (which cannot be asked: none); a client of 2026-07-28
// declares its own in each request. The backend is go-sdk's
// everything-server, pinned to 2026-07-28.
func TestBackendToldTheCallersCapabilities(t *testing.T) {
	t.Parallel()
	everything, err := testutil.Build("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", "")
	if err != nil {
		t.Fatal(err)
	}
	config := func(gateway string) string {
		return testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000`+gateway+`},
 "servers": [{"name": "everything", "command": `+strconv.Quote(everything)+`, "prefix": "", "protocol": "2026-07-28"}]}`)
	}
	cfg := config("")
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_missing_capability","arguments":{}}}`
	check := func(t *testing.T, what, got string, sampling bool) {
		t.Helper()
		want := capsMissing
		if sampling {
			want = capsSampling
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s: the backend did not see the caller's capabilities (want %q):\n%s", what, want, got)
		}
	}

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		for _, sampling := range []bool{false, true} {
			caps := `{}`
			if sampling {
				caps = `{"sampling":{}}`
			}
			p := startGateway(t, baseEnv(t), "--stdio", "--config", cfg)
			p.Call("initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"e2e","version":"1"}}`)
			p.Send(initializedMsg)
			check(t, "stdio, client caps "+caps, p.Call("tools/call", `{"name":"test_missing_capability","arguments":{}}`).String(), sampling)
		}
	})

	t.Run("http", func(t *testing.T) {
		t.Parallel()
		g := startHTTP(t, cfg)
		post := func(sid, body string, hdr map[string]string) string {
			t.Helper()
			resp := postMCP(t, g.base+"/mcp", sid, body, hdr)
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return string(raw)
		}
		// Two sessions at once: each call is the caller's, whichever
		// session came first.
		without := initRawCaps(t, g, `{}`)
		with := initRawCaps(t, g, `{"sampling":{},"roots":{}}`)
		check(t, "session without sampling", post(without, call, nil), false)
		check(t, "session with sampling", post(with, call, nil), true)
		check(t, "session without sampling, again", post(without, call, nil), false)

		// A client of 2026-07-28 declares them in each request.
		for _, sampling := range []bool{false, true} {
			caps := `{}`
			if sampling {
				caps = `{"sampling":{}}`
			}
			body := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test_missing_capability","arguments":{},"_meta":{` +
				`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c26","version":"1"},` +
				`"io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
			check(t, "2026-07-28 request, caps "+caps, post("", body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "test_missing_capability"}), sampling)
		}

		// Legacy SSE: go-sdk's client declares sampling when it has a
		// handler for it.
		for _, sampling := range []bool{false, true} {
			var opts *mcp.ClientOptions
			if sampling {
				opts = &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return nil, errors.New("not asked")
				}}
			}
			cs := goClient(t, &mcp.SSEClientTransport{Endpoint: g.base + "/sse"}, "sse-client", opts)
			ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_missing_capability", Arguments: map[string]any{}})
			cancel()
			got := ""
			var je *jsonrpc.Error
			switch {
			case errors.As(err, &je):
				got = je.Message
			case err != nil:
				t.Fatalf("SSE call: %v", err)
			case len(res.Content) > 0:
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					got = tc.Text
				}
			}
			check(t, "SSE, sampling "+strconv.FormatBool(sampling), got, sampling)
		}

		// REST cannot be asked anything.
		status, reply := restCall(t, g.base, `{"name":"test_missing_capability","arguments":{}}`)
		check(t, "REST", strconv.Itoa(status)+" "+reply.Error.Message, false)
	})

	t.Run("http stateless", func(t *testing.T) {
		t.Parallel()
		// A POST served on its own: the client's requests cannot reach
		// it, and it declared nothing.
		g := startHTTP(t, config(`, "http": {"stateless": true}`))
		resp := postMCP(t, g.base+"/mcp", "", call, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("stateless call: %d %s %v", resp.StatusCode, raw, err)
		}
		check(t, "stateless HTTP", string(raw), false)
	})

	t.Run("command line", func(t *testing.T) {
		t.Parallel()
		out, errOut, _ := runCLI(t, "call", "test_missing_capability", "--config", cfg)
		check(t, "mcp-gateway call", out+errOut, false)
	})
}
