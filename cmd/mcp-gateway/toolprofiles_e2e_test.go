package main

// Profiles (gateway.profiles) through the binary: over stdio with
// --profile, over HTTP at /p/NAME/..., and in the tools and call commands.

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// profileConfig has four backends: tb and other, and two MCP Apps whose
// tools have the same own names (app2 has secret_report too). The profile
// web includes tb's echo and app1's app tools (show, and poll, which only
// clients that render apps list).
func profileConfig(t *testing.T, mode string) string {
	t.Helper()
	secret := testutil.TempFile(t, "tools.json", `{"tools":{"secret_report":{"description":"app2's own tool"}}}`)
	return httpConfig(t, map[string]any{
		"tools_mode": mode,
		"profiles": []map[string]any{
			{"name": "web", "include": []string{"tb.e*", "app1.show", "app1.poll"}},
			{"name": "other", "include": []string{"other"}},
		},
	}, tb("tb"), tb("other"), tb("app1", "-app", "-name", "app1"), tb("app2", "-app", "-name", "app2", "-tools-file", secret))
}

// excludedSpellings are names of tools outside the profile web, each as a
// client may spell it: front names, a strict name, an app's own name.
var excludedSpellings = []string{"other.echo", "other__echo", "tb.slow", "app2.show", "secret_report"}

// rpcErrOf is the JSON-RPC error a go-sdk call failed with, with name in
// its message replaced by NAME.
func rpcErrOf(t *testing.T, err error, name string) jsonrpc.Error {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v is no JSON-RPC error", name, err)
	}
	out := *e
	out.Message = strings.ReplaceAll(out.Message, name, "NAME")
	return out
}

// wantNotFound checks that calling each excluded spelling through call
// fails exactly as calling a name nothing has.
func wantNotFound(t *testing.T, what string, call func(name string) error) {
	t.Helper()
	const nothing = "tb.no_such_tool"
	want := rpcErrOf(t, call(nothing), nothing)
	if want.Code != -32602 || want.Message != "Tool not found: NAME" {
		t.Fatalf("%s of a name nothing has: %+v", what, want)
	}
	for _, name := range excludedSpellings {
		if got := rpcErrOf(t, call(name), name); got.Code != want.Code || got.Message != want.Message || string(got.Data) != string(want.Data) {
			t.Errorf("%s %s: %+v, want %+v as for a tool that does not exist", what, name, got, want)
		}
	}
}

// checkProfileSession checks what a client of the profile web sees: its
// tools only in the list (tools_mode auto) or in find_tools (lazy), its
// tools called, every other tool not found by any spelling, through
// the meta tools too, and an app's own name reaching the profile's app
// alone (no ambiguity with app2's tool of the same name).
func checkProfileSession(t *testing.T, cs *mcp.ClientSession, mode string) {
	t.Helper()
	ctx := beCtx(t)
	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	}
	names := sdkToolNames(t, cs)
	if mode == "lazy" {
		if want := []string{"gateway.find_tools", "gateway.describe_tool", "gateway.call_tool", "gateway.call_tool_read", "gateway.run_script"}; !slices.Equal(names, want) {
			t.Errorf("lazy tools/list: %v", names)
		}
		find := func(args map[string]any) []string {
			res, err := call("gateway.find_tools", args)
			if err != nil || res.IsError {
				t.Fatalf("find_tools %v: %v %v", args, res, err)
			}
			var out struct{ Tools []struct{ Name string } }
			json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
			var found []string
			for _, tool := range out.Tools {
				found = append(found, tool.Name)
			}
			return found
		}
		if got := find(map[string]any{}); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"app1.show", "tb.echo"}) {
			t.Errorf("find_tools {}: %v, want the profile's tools", got)
		}
		if got := find(map[string]any{"query": "echo"}); !slices.Equal(got, []string{"tb.echo"}) {
			t.Errorf("find_tools echo: %v, want tb.echo only", got)
		}
		if got := find(map[string]any{"query": "secret report"}); len(got) != 0 {
			t.Errorf("find_tools secret report: %v, want none", got)
		}
		for _, meta := range []string{"gateway.describe_tool", "gateway.call_tool", "gateway.call_tool_read"} {
			wantNotFound(t, meta, func(name string) error {
				_, err := call(meta, map[string]any{"name": name, "arguments": map[string]any{}})
				return err
			})
		}
		if res, err := call("gateway.call_tool", map[string]any{"name": "tb.echo", "arguments": map[string]any{"k": "meta"}}); err != nil || res.IsError {
			t.Errorf("call_tool tb.echo: %v %v", res, err)
		}
	} else if !slices.Equal(names, []string{"tb.echo", "app1.show"}) {
		t.Errorf("tools/list: %v, want the profile's tb.echo, app1.show", names)
	}
	if res, err := call("tb.echo", map[string]any{"k": "v"}); err != nil || res.IsError {
		t.Errorf("tb.echo: %v %v", res, err)
	}
	for _, own := range []string{"show", "poll"} {
		res, err := call(own, nil)
		if err != nil {
			t.Errorf("own name %s: %v, want app1's", own, err)
		} else if sc, _ := res.StructuredContent.(map[string]any); sc["server"] != "app1" {
			t.Errorf("own name %s: %v, want app1's", own, res)
		}
	}
	wantNotFound(t, "tools/call", func(name string) error {
		_, err := call(name, map[string]any{})
		return err
	})
}

// A profile over stdio (--profile) and over HTTP (/p/NAME/mcp, /sse and
// REST): lists, calls, lazy search and REST show only the profile's
// tools, and a tool outside it cannot be called by any spelling: the same
// not-found error as a tool that does not exist. The plain paths serve
// everything; /p/NAME/ of no profile is 404, and a session is not reached
// on another profile's path.
func TestProfiles(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"auto", "lazy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := profileConfig(t, mode)
			t.Run("stdio", func(t *testing.T) {
				t.Parallel()
				checkProfileSession(t, startSDKVersion(t, cfg, nil, "2025-11-25", "--profile", "web"), mode)
			})
			t.Run("http", func(t *testing.T) {
				t.Parallel()
				g := startHTTP(t, cfg)
				checkProfileSession(t, goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/p/web/mcp"}, "e2e-go", nil), mode)
				if mode == "lazy" {
					return
				}
				sse := goClient(t, &mcp.SSEClientTransport{Endpoint: g.base + "/p/web/sse"}, "e2e-go", nil)
				if names := sdkToolNames(t, sse); !slices.Equal(names, []string{"tb.echo", "app1.show"}) {
					t.Errorf("/p/web/sse tools/list: %v", names)
				}
				if _, err := sse.CallTool(beCtx(t), &mcp.CallToolParams{Name: "other.echo"}); err == nil || !strings.Contains(err.Error(), "Tool not found: other.echo") {
					t.Errorf("/p/web/sse other.echo: %v", err)
				}
				plain := goClient(t, &mcp.StreamableClientTransport{Endpoint: g.base + "/mcp"}, "e2e-go", nil)
				if names := sdkToolNames(t, plain); !slices.Contains(names, "other.echo") || !slices.Contains(names, "app2.secret_report") {
					t.Errorf("/mcp: %v, want every tool", names)
				}
				checkProfileREST(t, g)
				if r := getURL(t, g.base+"/p/nope/mcp/tools", nil); r.StatusCode != http.StatusNotFound {
					t.Errorf("/p/nope/mcp/tools: %d, want 404", r.StatusCode)
				}
				// A session of web is not found on the plain path, nor
				// on another profile's.
				sid := initRawURL(t, g.base+"/p/web/mcp", "{}")
				for _, path := range []string{"/mcp", "/p/other/mcp"} {
					if r := postMCP(t, g.base+path, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil); r.StatusCode != http.StatusNotFound {
						t.Errorf("web's session at %s: %d, want 404", path, r.StatusCode)
					}
				}
				if r := postMCP(t, g.base+"/p/web/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil); r.StatusCode != http.StatusOK {
					t.Errorf("web's session at its path: %d", r.StatusCode)
				}
			})
		})
	}
	t.Run("commands", func(t *testing.T) {
		t.Parallel()
		cfg := profileConfig(t, "auto")
		out, errOut, code := runCLI(t, "tools", "--json", "--profile", "web", "--config", cfg)
		var listed struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil {
			t.Fatalf("tools --profile web: %d %v\n%s", code, err, errOut)
		}
		var names []string
		for _, tool := range listed.Tools {
			names = append(names, tool.Name)
		}
		if want := []string{"app1.poll", "app1.show", "tb.echo"}; !slices.Equal(names, want) {
			t.Errorf("tools --profile web: %v, want %v", names, want)
		}
		nothing, _, _ := runCLI(t, "call", "tb.no_such_tool", "--profile", "web", "--config", cfg)
		for _, name := range excludedSpellings {
			out, _, code := runCLI(t, "call", name, "--profile", "web", "--config", cfg)
			if code != 1 || strings.ReplaceAll(out, name, "NAME") != strings.ReplaceAll(nothing, "tb.no_such_tool", "NAME") {
				t.Errorf("call %s --profile web: exit %d\n%s\nwant as for a tool that does not exist:\n%s", name, code, out, nothing)
			}
		}
		if out, _, code := runCLI(t, "call", "other__echo", `{"k":1}`, "--config", cfg); code != 0 || !strings.Contains(out, `"k": 1`) {
			t.Errorf("call other__echo without a profile: exit %d\n%s", code, out)
		}
		if _, errOut, code := runCLI(t, "tools", "--profile", "nope", "--config", cfg); code != 2 || !strings.Contains(errOut, `flag --profile: "nope" names no profile of gateway.profiles (web, other)`) {
			t.Errorf("tools --profile nope: exit %d\n%s", code, errOut)
		}
	})
}

// checkProfileREST checks the REST API at /p/web/: the profile's tools
// listed, and a tool outside it not found by server and tool name, nor by
// name, as one that does not exist.
func checkProfileREST(t *testing.T, g *httpGW) {
	t.Helper()
	resp := getURL(t, g.base+"/p/web/mcp/tools", nil)
	var listed struct{ Tools []struct{ Name string } }
	if err := json.NewDecoder(resp.Body).Decode(&listed); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"app1.poll", "app1.show", "tb.echo"}; !slices.Equal(names, want) {
		t.Errorf("GET /p/web/mcp/tools: %v, want %v", names, want)
	}
	base := g.base + "/p/web"
	if code, r := restCall(t, base, `{"server":"tb","toolName":"echo","input":{"k":1}}`); code != 200 || !r.Success {
		t.Errorf("REST tb/echo: %d %+v", code, r)
	}
	for _, pair := range [][2]string{
		{`{"server":"other","toolName":"echo"}`, `{"server":"other","toolName":"no_such_tool"}`},
		{`{"server":"tb","toolName":"slow"}`, `{"server":"tb","toolName":"no_such_tool"}`},
		{`{"name":"other.echo"}`, `{"name":"other.no_such_tool"}`},
		{`{"name":"other__echo"}`, `{"name":"other__no_such_tool"}`},
		{`{"name":"secret_report"}`, `{"name":"no_such_tool"}`},
	} {
		code, got := restCall(t, base, pair[0])
		wantCode, want := restCall(t, base, pair[1])
		norm := func(s string) string {
			for _, n := range []string{"no_such_tool", "echo", "slow", "secret_report"} {
				s = strings.ReplaceAll(s, n, "NAME")
			}
			return s
		}
		if code != 404 || code != wantCode || got.Error.Code != want.Error.Code || norm(got.Error.Message) != norm(want.Error.Message) {
			t.Errorf("REST %s: %d %+v, want as %s: %d %+v", pair[0], code, got.Error, pair[1], wantCode, want.Error)
		}
	}
}
