package main

//lint:file-ignore SA1019 sampling is deprecated from protocol 2026-07-28 on, but backends still send it and the gateway forwards it.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPSamplingGoesToTheCaller: of two sessions that both declare
// sampling, the one that made the call — a tools/call or a resources/read —
// answers the backend's request.
func TestHTTPSamplingGoesToTheCaller(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb", "-asks")))
	var asked [2]atomic.Int32
	sessions := make([]*mcp.ClientSession, 2)
	for i := range sessions {
		sessions[i] = goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, fmt.Sprintf("client-%d", i), &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				asked[i].Add(1)
				return &mcp.CreateMessageResult{Model: fmt.Sprintf("model-%d", i), Role: "assistant", Content: &mcp.TextContent{Text: fmt.Sprintf("hi from %d", i)}}, nil
			},
		})
	}
	for _, i := range []int{1, 0, 1} {
		got := callEcho(t, sessions[i], "tb.sample", map[string]any{})
		if got["model"] != fmt.Sprintf("model-%d", i) {
			t.Errorf("session %d's call was sampled by %v", i, got)
		}
	}
	// testbackend -asks reads test://sampled by sampling: the text is the
	// sampling's.
	for _, i := range []int{0, 1, 0, 1} {
		res, err := sessions[i].ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://sampled"})
		if err != nil {
			t.Fatalf("session %d's read: %v", i, err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("session %d's read: %d contents", i, len(res.Contents))
		}
		if got := res.Contents[0].Text; got != fmt.Sprintf("hi from %d", i) {
			t.Errorf("session %d's read was sampled as %q", i, got)
		}
	}
	if asked[0].Load() != 3 || asked[1].Load() != 4 {
		t.Errorf("sampling requests per session: %d, %d; want 3, 4", asked[0].Load(), asked[1].Load())
	}
}

// TestHTTPSamplingNeverGoesToAnotherSession: a backend's sampling request
// during the call of a session that did not declare sampling, or of a REST
// caller (which cannot be asked anything), is refused (-32600 to the
// backend), not put to another session that declared it: the request may
// carry the caller's data.
func TestHTTPSamplingNeverGoesToAnotherSession(t *testing.T) {
	g := startHTTP(t, httpConfig(t, nil, tb("tb", "-asks")))
	var asked atomic.Int32
	goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, "samples", &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Model: "other", Role: "assistant", Content: &mcp.TextContent{Text: "other session's answer"}}, nil
		},
	})
	caller := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, "no-sampling", nil)
	got := callEcho(t, caller, "tb.sample", map[string]any{})
	e, _ := got["error"].(map[string]any)
	if code, _ := e["code"].(float64); code != -32600 {
		t.Errorf("the backend's sampling request got %v, want the -32600 refusal", got)
	}
	// The tool's result says what its sampling request got; REST
	// answers a result that is an error with its details.
	_, rest := restCall(t, g.base, `{"name":"tb.sample","arguments":{}}`)
	res, _ := rest.Error.Details["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	e, _ = sc["error"].(map[string]any)
	if code, _ := e["code"].(float64); code != -32600 {
		t.Errorf("REST call: %+v: the backend's sampling request was not refused", rest.Error)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the other session was asked %d times", n)
	}
}
