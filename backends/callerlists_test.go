package backends_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// passthroughFar is the server far at url, reached with each caller's own
// token.
func passthroughFar(url string) config.Server {
	return config.Server{Name: "far", URL: url, Enabled: true, Prefix: "far", Restart: "on-failure",
		UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamPassthrough, Audience: farAudience}}
}

// Each caller is shown the lists of their own session of a server reached
// per caller, never another's: alice's session lists alice_only, bob's
// bob_only (the testbackend's -subject-tool), and nobody in particular is
// shown none of the server's tools. A call of the other's tool is not
// listed; the lists are private in the cache hints.
func TestCallerListsOwn(t *testing.T) {
	t.Parallel()
	e := start(t, []config.Server{passthroughFar(startFar(t, "-subject-tool", "alice=alice_only", "-subject-tool", "bob=bob_only"))}, nil)
	alice, bob := callerOf("alice", farAudience), callerOf("bob", farAudience)
	whoamiAs(t, e, alice) // alice's session first: before, everyone was shown its lists
	whoamiAs(t, e, bob)
	for _, c := range []struct {
		who        *backends.Caller
		own, other string
	}{{alice, "far/alice_only", "far/bob_only"}, {bob, "far/bob_only", "far/alice_only"}} {
		got := toolNames(e.ToolsFor(c.who))
		if !slices.Contains(got, c.own) || slices.Contains(got, c.other) || !slices.Contains(got, "far/whoami") {
			t.Errorf("%s is shown %v, want %s and not %s", c.who.Subject, got, c.own, c.other)
		}
		hints := e.ListHintsFor("tools/list", c.who)
		if len(hints) != 1 || !hints[0].Private {
			t.Errorf("%s's tools/list hints %+v, want private", c.who.Subject, hints)
		}
	}
	if got := toolNames(e.Tools()); len(got) != 0 {
		t.Errorf("nobody in particular is shown %v, want none of far's tools", got)
	}
	if hints := e.ListHints("tools/list"); len(hints) != 1 || !hints[0].Private {
		t.Errorf("nobody's tools/list hints %+v, want private", hints)
	}
	if res, err := e.CallTool(context.Background(), "far", "alice_only", json.RawMessage(`{}`), backends.CallOptions{Caller: alice}); err != nil || !strings.Contains(string(res), "alice_only for alice") {
		t.Errorf("alice's alice_only: %s %v", res, err)
	}
	var nl *backends.NotListedError
	if _, err := e.CallTool(context.Background(), "far", "alice_only", json.RawMessage(`{}`), backends.CallOptions{Caller: bob}); !errors.As(err, &nl) {
		t.Errorf("bob's call of alice_only: %v, want not listed", err)
	}
}

// A list_changed of a caller's own session is that caller's: the Manager
// tells Hooks.CallerChanged with the caller, never Hooks.Changed (every
// client), and the other caller's lists stay as they were.
func TestCallerListChanged(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	servers := map[string]*mcp.Server{} // by subject: each person's own server
	serverOf := func(sub string) *mcp.Server {
		mu.Lock()
		defer mu.Unlock()
		if servers[sub] == nil {
			s := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
			mcp.AddTool(s, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + sub}}}, nil, nil
			})
			servers[sub] = s
		}
		return servers[sub]
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return serverOf(testutil.BearerSubject(r)) }, nil))
	t.Cleanup(hs.Close)

	changes := make(chan string, 100)
	m := backends.New(backends.Options{Servers: []config.Server{passthroughFar(hs.URL)}, DefaultTimeout: 10 * time.Second, StartupTimeout: 10 * time.Second})
	m.SetHooks(backends.Hooks{
		Changed:       func(server string) { changes <- "everyone's " + server },
		CallerChanged: func(server, caller string) { changes <- caller + "'s " + server },
	})
	m.Start(context.Background())
	t.Cleanup(func() { _ = m.Close() })
	alice, bob := callerOf("alice", farAudience), callerOf("bob", farAudience)
	for _, c := range []*backends.Caller{alice, bob} {
		if _, err := m.CallTool(context.Background(), "far", "hello", json.RawMessage(`{}`), backends.CallOptions{Caller: c}); err != nil {
			t.Fatalf("%s: %v", c.Subject, err)
		}
	}
	await := func(want string) []string {
		t.Helper()
		var before []string
		deadline := time.After(testutil.DefaultTimeout)
		for {
			select {
			case got := <-changes:
				if got == want {
					return before
				}
				before = append(before, got)
			case <-deadline:
				t.Fatalf("no change %q; had %q", want, before)
			}
		}
	}
	// Both sessions are ready once each was told (the server's state,
	// Ready, is everyone's once).
	await("bob@idp's far")

	mcp.AddTool(serverOf("alice"), &mcp.Tool{Name: "added"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	if before := await("alice@idp's far"); len(before) != 0 {
		t.Errorf("before alice's change, %q", before)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "alice's list with added", func() bool {
		return slices.Contains(toolNames(m.ToolsFor(alice)), "far/added")
	})
	if got := toolNames(m.ToolsFor(bob)); slices.Contains(got, "far/added") {
		t.Errorf("bob is shown alice's new tool: %v", got)
	}
	// bob's change is the sync point: what alice's told anyone else
	// came before it, in order.
	mcp.AddTool(serverOf("bob"), &mcp.Tool{Name: "bobs"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	if before := await("bob@idp's far"); len(before) != 0 {
		t.Errorf("alice's list_changed told %q beyond alice", before)
	}
}
