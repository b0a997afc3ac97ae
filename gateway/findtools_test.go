package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// find_tools as the gateway answers it; the ranking itself is
// gateway/internal/toolsearch's, and tested there.

// manyTools is n backend tools over 10 servers, with descriptions of
// realistic length, plus a meta tool that find_tools never returns.
func manyTools(n int) map[string]toolRoute {
	routes := map[string]toolRoute{"gateway.find_tools": {kind: metaTool, tool: &mcp.Tool{Name: "gateway.find_tools", Description: "files"}}}
	for i := range n {
		server := fmt.Sprintf("srv%d", i%10)
		desc := fmt.Sprintf("Tool number %d reads and writes records of kind k%d in the store.\nSecond line.", i, i%97)
		if i%1000 == 7 {
			desc = "Search Files by glob pattern " + desc
		}
		name, r := route(server, fmt.Sprintf("tool_%d", i), desc, `{"type":"object"}`, nil)
		routes[name] = r
	}
	return routes
}

// route is a backend tool of server with its own name, description and
// input schema.
func route(server, own, desc, schema string, ann *mcp.ToolAnnotations) (string, toolRoute) {
	name := server + "." + own
	t := &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema), Annotations: ann}
	def, err := wire.Marshal(t)
	if err != nil {
		panic(err)
	}
	return name, toolRoute{kind: backendTool, server: server, own: own, tool: t, def: def}
}

func index(tools ...func() (string, toolRoute)) *toolsearch.Index {
	routes := make(map[string]toolRoute)
	for _, f := range tools {
		name, r := f()
		routes[name] = r
	}
	return newFindIndex(routes, nil, nil)
}

func tool(server, own, desc string) func() (string, toolRoute) {
	return func() (string, toolRoute) { return route(server, own, desc, `{"type":"object"}`, nil) }
}

// find_tools' answer: text only, the tools and, when there are none, what
// to try; a server that does not exist is named and the servers listed.
func TestFindToolsResult(t *testing.T) {
	ix := newFindIndex(manyTools(30), nil, nil)
	call := func(args string) (string, error) {
		var a metaArgs
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			t.Fatal(err)
		}
		raw, err := findTools(context.Background(), ix, a, nil)
		return string(raw), err
	}
	for _, tc := range []struct{ args, want string }{
		{`{"query":"tool_7"}`, `{"content":[{"type":"text","text":"{\"tools\":[{\"name\":\"srv7.tool_7\",\"description\":\"Search Files by glob pattern Tool number 7 reads and writes records of kind k7 in the store.\",\"inputSchema\":{\"type\":\"object\"}},{`},
		{`{"query":"nothing matches"}`, `No tool matched. Try other words`},
		{`{"query":"tool","server":"nope"}`, `No server is named \\\"nope\\\". Servers: srv0, srv1,`},
		{`{}`, `The first 8 of 30 tools, by name.`},
		{`{"query":"tool","limit":2}`, `{"content":[{"type":"text","text":"{\"tools\":[{\"name\":\"srv0.tool_0\"`},
	} {
		got, err := call(tc.args)
		if err != nil || !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %s %v\nwant %s", tc.args, got, err, tc.want)
		}
		if strings.Contains(got, "structuredContent") {
			t.Errorf("%s: structuredContent in %s", tc.args, got)
		}
	}
	for args, want := range map[string]string{
		`{"query":"tool","limit":0}`:   "limit must be a whole number of at least 1",
		`{"query":"tool","limit":1.5}`: "limit must be a whole number of at least 1",
		`{"query":"` + strings.Repeat("ww ", 100000) + many(toolsearch.MaxWords) + `"}`: fmt.Sprintf("more than %d distinct words", toolsearch.MaxWords),
	} {
		if _, err := call(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s: %v, want %q", args, err, want)
		}
	}
	if got, err := call(`{"query":"tool","limit":1000}`); err != nil || strings.Count(got, `\"name\"`) != 30 {
		t.Errorf("limit 1000 (over %d: the most) = %.80s, %v", maxFindLimit, got, err)
	}
	if _, err := call(`{"query":"` + strings.Repeat("ww ", 100000) + many(toolsearch.MaxWords-1) + `"}`); err != nil {
		t.Errorf("%d distinct words: %v", toolsearch.MaxWords, err)
	}
}

// many is n distinct words.
func many(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " x%d", i)
	}
	return b.String()
}

// BenchmarkFindTools is one gateway.find_tools query over 10,000 tools: a

// FuzzFindTools: any query, server and limit gives an answer or a -32602
// error, never a panic; never more tools than the limit; the same answer
// twice.
func FuzzFindTools(f *testing.F) {
	ix := index(
		tool("web", "take_screenshot", "Take a screenshot of the current page."),
		tool("fs", "read_file", "Read the complete contents of a file."),
		tool("git", "create_repository", "Create a new repository in your account."),
	)
	f.Add("take a screenshot of https://example.com", "", 8.0)
	f.Add("fs.read_", "fs", 1.0)
	f.Add("ÜBER-größe useEffect 日本語 ss sses ies", "git", 50.0)
	f.Add("", "nope", 0.5)
	f.Add(strings.Repeat("ab ", 40), "", 1e9)
	f.Fuzz(func(t *testing.T, query, server string, limit float64) {
		args := metaArgs{Query: query, Server: server, Limit: &limit}
		first, err := findTools(context.Background(), ix, args, nil)
		if err != nil {
			return
		}
		var res struct{ Content []struct{ Text string } }
		var found struct{ Tools []toolsearch.Hit }
		if json.Unmarshal(first, &res) != nil || len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].Text), &found) != nil {
			t.Fatalf("answer: %s", first)
		}
		if float64(len(found.Tools)) > min(limit, maxFindLimit) {
			t.Errorf("%d tools, limit %v", len(found.Tools), limit)
		}
		if again, _ := findTools(context.Background(), ix, args, nil); string(again) != string(first) {
			t.Errorf("a second answer differs:\n%s\n%s", first, again)
		}
	})
}
