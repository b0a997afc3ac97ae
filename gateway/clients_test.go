package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var metaNames = []string{"gateway__find_tools", "gateway__describe_tool", "gateway__call_tool", "gateway__call_tool_read", "gateway__run_script"}

// metaText is a meta tool's answer: its one text content, decoded.
func metaText(t *testing.T, res *mcp.CallToolResult, err error) map[string]any {
	t.Helper()
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("meta tool: %v %v", res, err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// With VS Code's client name (which sends a model at most 128 tools) and
// 200 backend tools, tools/list holds the meta tools only, and every tool
// stays reachable: find_tools finds each by its name, first, describe_tool
// describes it, and call_tool and a direct call reach it. A client with
// its own tool search (Claude Code) and Cursor (whose "cursor-vscode" is no
// VS Code) get all 200.
func TestToolSurfaceOverCap(t *testing.T) {
	gw, ctx := newGateway(t, nil, testServer("a", "-extra-tools", "88"), testServer("b", "-extra-tools", "88"))
	vscode := connectHarness(t, gw, ctx, "Visual Studio Code")
	listed := vscode.toolNames(t)
	if len(listed) > 128 || !slices.Equal(listed, metaNames) {
		t.Fatalf("VS Code's tools/list: %d tools %v, want the meta tools", len(listed), listed)
	}
	for _, client := range []string{"claude-code", "cursor-vscode"} {
		if n := len(connectHarness(t, gw, ctx, client).toolNames(t)); n != 200 {
			t.Errorf("%s: %d tools, want all 200", client, n)
		}
	}
	all := gw.Tools()
	if len(all) != 200 {
		t.Fatalf("%d tools, want 200", len(all))
	}
	for _, tool := range all {
		name := tool.StrictName // VS Code's names are strict
		res, err := vscode.call("gateway__find_tools", map[string]any{"query": name, "limit": 1})
		found := metaText(t, res, err)
		if tools, _ := found["tools"].([]any); len(tools) != 1 || tools[0].(map[string]any)["name"] != name {
			t.Fatalf("find_tools %q: %v", name, found)
		}
		res, err = vscode.call("gateway__describe_tool", map[string]any{"name": name})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"name":"`+name+`"`) {
			t.Fatalf("describe_tool %q: %v %v", name, res, err)
		}
	}
	for _, name := range []string{"a__echo", "b__extra_087"} {
		res, err := vscode.call("gateway__call_tool", map[string]any{"name": name, "arguments": map[string]any{"via": "call_tool"}})
		if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "via:call_tool") {
			t.Errorf("call_tool %s: %v %v", name, res, err)
		}
		res, err = vscode.call(name, map[string]any{"via": "direct"})
		if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "via:direct") {
			t.Errorf("direct call %s: %v %v", name, res, err)
		}
	}
}

// Within its cap VS Code gets the whole list, and no meta tools; when a
// backend's new tool takes the list past the cap, the client is told the
// list changed, and it then holds the meta tools. A client of tools_mode:
// full gets the whole list however long.
func TestToolSurfaceCapCrossed(t *testing.T) {
	gw, ctx := newGateway(t, nil, testServer("tb", "-extra-tools", "116"))
	h := connectHarness(t, gw, ctx, "Visual Studio Code 1.108")
	names := h.toolNames(t)
	if len(names) != 128 || slices.Contains(names, metaNames[0]) {
		t.Fatalf("128 tools: VS Code's list has %d, meta tools: %v", len(names), slices.Contains(names, metaNames[0]))
	}
	if _, err := h.call("tb__change", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "list_changed past the cap", func() bool { return h.listChanged.Load() > 0 })
	if names := h.toolNames(t); !slices.Equal(names, metaNames) {
		t.Errorf("129 tools: VS Code's list %d tools, want the meta tools", len(names))
	}

	full, ctx := newGateway(t, func(c *config.Config) { c.Gateway.ToolsMode = "full" }, testServer("tb", "-extra-tools", "200"))
	if n := len(connectHarness(t, full, ctx, "Visual Studio Code").toolNames(t)); n != 212 {
		t.Errorf("tools_mode full: VS Code's list has %d tools, want 212", n)
	}
	if _, err := connectHarness(t, full, ctx, "Visual Studio Code").call("gateway__find_tools", map[string]any{}); err == nil {
		t.Error("tools_mode full: gateway__find_tools answered")
	}
}

// Under strict_names: auto, Claude Code's names leave room for the
// mcp__ENTRY__ it puts before each (entry gateway: 64 - 14 = 50
// characters), stay distinct, and each calls its own tool; another strict
// client's names go to 64. gateway.entry_name changes the room; with
// strict_names: true every client gets the same names, up to 64.
func TestClaudeCodeNamesFitItsPrefix(t *testing.T) {
	long := []string{
		"fetch_the_complete_revision_history_of_a_document_by_its_id",
		"fetch_the_complete_revision_history_of_a_document_by_its_path",
		"summarize",
	}
	defs := map[string]any{}
	for _, name := range long {
		defs[name] = map[string]any{"description": "d", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "I am " + name}}}}
	}
	file := filepath.Join(t.TempDir(), "tools.json")
	data, _ := json.Marshal(map[string]any{"tools": defs})
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	server := testServer("documents", "-tools-file", file)
	for _, tc := range []struct {
		name, client, entry, strictNames string
		max                              int
	}{
		{"claude-code", "claude-code", "gateway", "auto", 64 - len("mcp__gateway__")},
		{"another entry", "claude-code", "my-tools", "auto", 64 - len("mcp__my-tools__")},
		{"another strict client", "copilot", "gateway", "auto", 64},
		{"strict_names true", "claude-code", "gateway", "true", 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw, ctx := newGateway(t, func(c *config.Config) { c.Gateway.EntryName, c.Gateway.StrictNames = tc.entry, tc.strictNames }, server)
			h := connectHarness(t, gw, ctx, tc.client)
			names := h.toolNames(t)
			longest := 0
			for _, n := range names {
				longest = max(longest, len(n))
			}
			if longest != tc.max {
				t.Errorf("longest name %d characters, want %d: %q", longest, tc.max, names)
			}
			if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
				t.Errorf("names not distinct: %q", names)
			}
			for _, own := range long {
				var name string
				for _, n := range names {
					if !strings.Contains(n, "fetch") && !strings.Contains(n, "summarize") {
						continue // the built-in tools: crash and deaf would end the backend
					}
					if res, err := h.call(n, map[string]any{}); err == nil && len(res.Content) > 0 && res.Content[0].(*mcp.TextContent).Text == "I am "+own {
						name = n
					}
				}
				if name == "" {
					t.Errorf("no name calls %s: %q", own, names)
				}
			}
		})
	}
}

// A request of the per-request era says who its client is in its _meta:
// the list follows each request's client, the same for every request of
// one client, and says cacheScope private, since it depends on who asks.
func TestToolSurfacePerRequestEra(t *testing.T) {
	gw, ctx := newGateway(t, nil, testServer("tb", "-extra-tools", "130"))
	list := func(client string) (names []string, scope string) {
		f := gw.newFront(frontOptions{version: "2026-07-28"})
		defer gw.dropFront(f)
		f.identify(client, nil, "2026-07-28")
		raw, err := f.list(ctx, "tools/list", nil, wire.PerRequestEra)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Tools      []struct{ Name string }
			CacheScope string
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names, res.CacheScope
	}
	for range 2 {
		if names, scope := list("Visual Studio Code"); !slices.Equal(names, metaNames) || scope != "private" {
			t.Errorf("VS Code: %d tools, cacheScope %s; want the meta tools, private", len(names), scope)
		}
		if names, scope := list("claude-code"); len(names) != 142 || scope != "private" {
			t.Errorf("claude-code: %d tools, cacheScope %s; want 142, private", len(names), scope)
		}
	}
}
