package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tsErrors are the syntax errors esbuild's TypeScript parser finds in
// src (tsc is not installed; gateway/internal/tsdecl's TestParseTSCatches
// shows the parser rejects broken declarations).
func tsErrors(src string) []string {
	res := api.Transform(src, api.TransformOptions{Loader: api.LoaderTS, LogLevel: api.LogLevelSilent})
	return api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
}

// resultText is a meta tool result's one text content.
func resultText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res struct {
		Content           []struct{ Type, Text string }
		StructuredContent any
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" || res.StructuredContent != nil || strings.Contains(string(raw), `\u003c`) {
		t.Fatalf("not a text result: %s %v", raw, err)
	}
	return res.Content[0].Text
}

// find_tools with format "ts" answers with the found tools' TypeScript
// declarations (over the 15 captured npm servers' real tools), the hint
// as a comment, the tools past maxTSResult named; json is the default;
// another format is refused.
func TestFindToolsTS(t *testing.T) {
	ix := loadToolsets(t).index()
	find := func(a metaArgs) (string, error) {
		raw, err := findTools(context.Background(), ix, a, nil)
		if err != nil {
			return "", err
		}
		return resultText(t, raw), nil
	}

	got, err := find(metaArgs{Query: "create entities in the knowledge graph", Limit: ptr(3.0), Format: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "interface Tools {\n") || !strings.HasSuffix(got, "declare var tools: Tools;\n") {
		t.Errorf("not declarations:\n%s", got)
	}
	if want := `  "memory.create_entities"(args: {
    entities: {
      /** The name of the entity */
      name: string;`; !strings.Contains(got, want) {
		t.Errorf("memory.create_entities not declared:\n%s", got)
	}
	if n := strings.Count(got, `"(args: `); n != 3 {
		t.Errorf("%d tools declared, want 3:\n%s", n, got)
	}
	if errs := tsErrors(got); len(errs) > 0 {
		t.Errorf("not TypeScript: %s\n%s", strings.Join(errs, "\n"), got)
	}

	def, err := find(metaArgs{Query: "create entities"})
	if err != nil {
		t.Fatal(err)
	}
	if explicit, err := find(metaArgs{Query: "create entities", Format: "json"}); err != nil || explicit != def || !strings.HasPrefix(def, `{"tools":[`) {
		t.Errorf("format json = %.80s %v, the default %.80s", explicit, err, def)
	}

	// Every tool, 50 at most: more than fits.
	got, err = find(metaArgs{Limit: ptr(50.0), Format: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	decl, rest, ok := strings.Cut(got, "declare var tools: Tools;\n")
	if !ok || !strings.HasPrefix(rest, "// Also found, not declared here (the answer's size): \"") || len(decl) > maxTSResult+200 {
		t.Errorf("%d bytes of declarations, then %q", len(decl), rest)
	}
	if !strings.Contains(decl, "// The first 50 of ") {
		t.Errorf("no hint in:\n%.300s", decl)
	}
	if errs := tsErrors(got); len(errs) > 0 {
		t.Errorf("not TypeScript: %s", strings.Join(errs, "\n"))
	}

	if got, err := find(metaArgs{Query: "tool", Server: "nope", Format: "ts"}); err != nil || got != `// No server is named "nope". Servers: brave, chart, commander, context7, devtools, everything, filesystem, github, maps, memory, notion, playwright, postgres, slack, thinking.`+"\n" {
		t.Errorf("no such server: %q %v", got, err)
	}
	// A description's first line, as in JSON; describe_tool's is whole.
	got, err = find(metaArgs{Query: "notion retrieve a user", Limit: ptr(1.0), Format: "ts"})
	if err != nil || !strings.Contains(got, "  /** Notion | Retrieve a user */\n  \"notion.API-get-user\"(args: { user_id: string }): Promise<string | object>;\n") {
		t.Errorf("find notion.API-get-user: %s %v", got, err)
	}
	user, _ := ix.Def("notion.API-get-user")
	if got := resultText(t, tsDescribed(user)); !strings.Contains(got, "   * Notion | Retrieve a user\n   * Error Responses:\n") {
		t.Errorf("describe notion.API-get-user:\n%s", got)
	}
	for _, f := range []string{"typescript", "TS", "JSON"} {
		if _, err := find(metaArgs{Query: "x", Format: f}); err == nil || !strings.Contains(err.Error(), `format must be "json" or "ts", not "`+f+`"`) {
			t.Errorf("format %q: %v", f, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// describe_tool with format "ts" declares the tool, under the name the
// client calls it by (a real testbackend, lazy mode, strict names); the
// meta tools' input schemas offer the format.
func TestDescribeToolTS(t *testing.T) {
	gw, ctx := newGateway(t, func(c *config.Config) { c.Gateway.ToolsMode = "lazy" }, testServer("tb", "-extra-tools", "1"))
	h := connectHarness(t, gw, ctx, "Visual Studio Code")
	text := func(res *mcp.CallToolResult, err error) string {
		t.Helper()
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("%v %v", res, err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	got := text(h.call("gateway__describe_tool", map[string]any{"name": "tb__extra_000", "format": "ts"}))
	if !strings.HasPrefix(got, "interface Tools {\n") || !strings.Contains(got, "\n  \"tb__extra_000\"(args: ") {
		t.Errorf("describe_tool ts:\n%s", got)
	}
	if errs := tsErrors(got); len(errs) > 0 {
		t.Errorf("not TypeScript: %s\n%s", strings.Join(errs, "\n"), got)
	}
	if got := text(h.call("gateway__describe_tool", map[string]any{"name": "tb__extra_000"})); !strings.HasPrefix(got, `{"name":"tb__extra_000"`) {
		t.Errorf("describe_tool json: %s", got)
	}
	if res, err := h.call("gateway__describe_tool", map[string]any{"name": "tb__extra_000", "format": "yaml"}); err == nil && !res.IsError {
		t.Errorf("format yaml: %v", res)
	} else if !strings.Contains(fmtErr(res, err), `format must be "json" or "ts", not "yaml"`) {
		t.Errorf("format yaml: %s", fmtErr(res, err))
	}
	got = text(h.call("gateway__find_tools", map[string]any{"query": "tb__extra_000", "limit": 1, "format": "ts"}))
	if !strings.Contains(got, "\n  \"tb__extra_000\"(args: ") {
		t.Errorf("find_tools ts:\n%s", got)
	}

	// The format is offered with run_script (code mode, on in lazy mode
	// unless turned off), and not without it.
	for _, code := range []string{"auto", "false"} {
		gw, ctx := newGateway(t, func(c *config.Config) { c.Gateway.ToolsMode, c.Gateway.CodeMode = "lazy", code }, testServer("tb"))
		list, err := connectHarness(t, gw, ctx, "Visual Studio Code").session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tool := range list.Tools {
			if tool.Name != "gateway__find_tools" && tool.Name != "gateway__describe_tool" {
				continue
			}
			n++
			schema, _ := json.Marshal(tool.InputSchema)
			offered := strings.Contains(string(schema), `"format":{"description":"ts: TypeScript declarations`) && strings.Contains(tool.Description, `format "ts"`)
			if offered != (code == "auto") || !offered && strings.Contains(string(schema)+tool.Description, "format") {
				t.Errorf("code_mode %s: %s: %s\n%s", code, tool.Name, tool.Description, schema)
			}
		}
		if n != 2 {
			t.Errorf("code_mode %s: %d of find_tools and describe_tool listed", code, n)
		}
	}
}

// fmtErr is a failed call's error, as a protocol error or a tool error.
func fmtErr(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return err.Error()
	}
	b, _ := json.Marshal(res)
	return string(b)
}
