package main

// End-to-end tests of a backend's requests to the client: sampling
// forwarded to a go-sdk client that declared it, refused for one that did
// not, and a backend's list_changed reaching the client.

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// Sampling from a backend is forwarded to a client that declared it, and
// the client's answer goes back; a backend's list_changed reaches the client,
// which then sees the new tool.
func TestBackendSamplingAndListChanged(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 16)
	var sampled []string
	var smu sync.Mutex
	cs := startSDK(t, beConfig(t, tb("tb")), &mcp.ClientOptions{
		//lint:ignore SA1019 sampling is deprecated from protocol 2026-07-28 on; 2025-11-25 backends still use it and the gateway forwards it.
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := ""
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			smu.Lock()
			sampled = append(sampled, text)
			smu.Unlock()
			//lint:ignore SA1019 as above
			return &mcp.CreateMessageResult{Model: "e2e-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled: " + text}}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	wantTools(t, sdkToolNames(t, cs), "tb.sample", "tb.change")

	ctx := beCtx(t)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.sample", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tb.sample: %v", err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	content, _ := sc["content"].(map[string]any)
	if res.IsError || sc["model"] != "e2e-model" || content["text"] != "sampled: hi" {
		t.Errorf("tb.sample result = %+v (structured %v)", res, sc)
	}
	smu.Lock()
	if !slices.Equal(sampled, []string{"hi"}) {
		t.Errorf("client sampled %q, want [hi]", sampled)
	}
	smu.Unlock()

	for len(changed) > 0 { // list_changed from startup
		<-changed
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.change", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("tb.change: %v %+v", err, res)
	}
	deadline := time.After(testutil.DefaultTimeout)
	for found := false; !found; {
		select {
		case <-changed:
			found = slices.Contains(sdkToolNames(t, cs), "tb.added_1")
		case <-deadline:
			t.Fatalf("no list_changed with tb.added_1; tools %v", sdkToolNames(t, cs))
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.added_1", Arguments: map[string]any{"x": 1}})
	if err != nil || res.IsError {
		t.Errorf("tb.added_1: %v %+v", err, res)
	}
}

// A client that did not declare sampling: the backend's request is refused,
// which testbackend reports as an isError result.
func TestBackendSamplingWithoutCapability(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	s.toolsList()
	r := s.callTool("tb.sample", `{}`)
	if res := r.Result(t); res["isError"] != true {
		t.Errorf("tb.sample without sampling = %s, want isError", r)
	}
	for _, n := range s.Since(0, "sampling/createMessage") {
		t.Errorf("sampling request sent to a client without the capability: %s", n)
	}
}
