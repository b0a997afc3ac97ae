package gateway

//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, but backends still send it and the gateway forwards it.

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBackendToldCallersCaps: a backend of 2026-07-28 that many clients
// share (no AwaitClient, as over HTTP) is told in each request the
// capabilities of the client that made it, not the ones its session was
// told (everything the gateway relays): of two clients of the handshake
// era, the one with sampling and the one without, each in turn; and none
// for Call (REST, the command line), which cannot be asked. go-sdk's
// everything-server's test_missing_capability answers -32021 unless the
// request declares sampling.
func TestBackendToldCallersCaps(t *testing.T) {
	t.Parallel()
	bin, err := testutil.Build("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", "")
	if err != nil {
		t.Fatal(err)
	}
	gw, ctx := newGateway(t, nil, config.Server{Name: "e", Prefix: "e", Command: bin, Enabled: true, Restart: "never", Protocol: "2026-07-28"})
	connect := func(sampling bool) *mcp.ClientSession {
		t.Helper()
		ct, st := mcp.NewInMemoryTransports()
		served := make(chan error, 1)
		go func() { served <- gw.Serve(ctx, st) }()
		var opts *mcp.ClientOptions
		if sampling {
			opts = &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return nil, errors.New("not asked")
			}}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cs.Close()
			<-served
		})
		return cs
	}
	without, with := connect(false), connect(true)
	const missing = -32021 // go-sdk's CodeMissingRequiredClientCapabilities
	call := func(cs *mcp.ClientSession) int {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, testutil.DefaultTimeout)
		defer cancel()
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "e.test_missing_capability", Arguments: map[string]any{}})
		if err == nil {
			return 0
		}
		return int(rpcCode(t, err).Code)
	}
	for i, c := range []struct {
		cs   *mcp.ClientSession
		want int
	}{{without, missing}, {with, 0}, {without, missing}} {
		if got := call(c.cs); got != c.want {
			t.Errorf("call %d: error code %d, want %d (0: executed)", i, got, c.want)
		}
	}
	if raw, e := gw.Call(ctx, "e.test_missing_capability", json.RawMessage(`{}`)); e == nil || e.Code != missing {
		t.Errorf("Call (REST, the command line): %s %v, want error %d", raw, e, missing)
	}
}
