package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

func index(tools ...func() (string, toolRoute)) *toolIndex {
	routes := make(map[string]toolRoute)
	for _, f := range tools {
		name, r := f()
		routes[name] = r
	}
	return newToolIndex(routes, nil, nil)
}

func tool(server, own, desc string) func() (string, toolRoute) {
	return func() (string, toolRoute) { return route(server, own, desc, `{"type":"object"}`, nil) }
}

func names(ts []foundTool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func find(t *testing.T, ix *toolIndex, query, server string, limit int) []string {
	t.Helper()
	if limit == 0 {
		limit = findLimit
	}
	found, err := ix.find(context.Background(), findQuery{Query: query, Server: server, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return names(found)
}

func TestStem(t *testing.T) {
	for _, forms := range [][]string{
		{"create", "creates", "created", "creating", "creation"},
		{"file", "files", "filed"},
		{"search", "searches", "searched", "searching"},
		{"directory", "directories"},
		{"copy", "copies", "copied"},
		{"reply", "replies", "replied"},
		{"run", "runs", "running"},
		{"stop", "stops", "stopped", "stopping"},
		{"add", "adds", "added", "adding"},
		{"relation", "relations", "relationship", "relationships"},
		{"recursive", "recursively"},
		{"use", "uses", "used", "using"},
	} {
		for _, f := range forms[1:] {
			if stem(f) != stem(forms[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q: want the same", f, stem(f), forms[0], stem(forms[0]))
			}
		}
	}
	for _, w := range []string{"class", "status", "analysis", "42", "über", "js"} {
		if stem(w) != w && !strings.HasPrefix(w, stem(w)) {
			t.Errorf("stem(%q) = %q", w, stem(w))
		}
	}
	if stem("apply") == stem("app") || stem("thread") == stem("read") {
		t.Error("stems of different words are the same")
	}
}

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		text  string
		ident bool
		want  string
	}{
		{"getFileInfo", true, "[get file info]"},
		{"GitHub's API-post-page", false, "[github api post page]"},
		{"browser_take_screenshot v2", true, "[browser take screenshot v2]"},
		{"a b c", false, "[]"},
	} {
		if got := fmt.Sprint(words(tc.text, tc.ident)); got != tc.want {
			t.Errorf("words(%q, %v) = %s, want %s", tc.text, tc.ident, got, tc.want)
		}
	}
	if got := terms(nil, "How do I take the screenshot of https://x.example/a?", false); fmt.Sprint(got) != "[tak screenshot http exampl]" {
		t.Errorf("terms = %v", got)
	}
	if got := withoutURLs("open https://example.com/x in www.example.org now"); got != "open in now" {
		t.Errorf("withoutURLs = %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		max  int
		want int
	}{
		{"screenshot", "screenshot", 2, 0},
		{"scrennshto", "screenshot", 2, 2}, // a substitution and a transposition
		{"screesnhot", "screenshot", 2, 1}, // a transposition
		{"clik", "click", 1, 1},
		{"berlin", "15000", 1, 2}, // more than max: max+1
		{"abc", "abcdef", 1, 2},
	} {
		if got := editDistance(tc.a, tc.b, tc.max); got != tc.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.max, got, tc.want)
		}
	}
}

// The ranking: relevance first, not name order; every word may be missing
// (OR); stop words do not match; forms of a word match; a name that is the
// query, then one that starts with it, comes first; typos and synonyms
// match, and a term matched as typed outranks one matched through them.
func TestFindRanks(t *testing.T) {
	ix := index(
		tool("web", "take_screenshot", "Take a screenshot of the current page."),
		tool("web", "navigate", "Navigate to a URL in the browser."),
		tool("web", "click", "Click an element on the page."),
		tool("fs", "read_file", "Read the complete contents of a file."),
		tool("fs", "read_multiple_files", "Read the contents of multiple files at once."),
		tool("fs", "search_files", "Search for files matching a glob pattern."),
		tool("fs", "create_directory", "Create a new directory."),
		tool("git", "create_branch", "Create a new branch in a repository."),
		tool("git", "create_repository", "Create a new repository in your account."),
		tool("notes", "address_book", "Stores the user's contacts."),
		tool("calc", "sum", "Adds two numbers."),
	)
	for _, tc := range []struct {
		query string
		first string
	}{
		{"take a screenshot of the web page", "web.take_screenshot"},
		{"I want to see what the page looks like as a screenshot image", "web.take_screenshot"}, // OR: most words match nothing
		{"open https://example.com in the browser", "web.navigate"},
		{"read several files at once", "fs.read_multiple_files"},
		{"creating a folder", "fs.create_directory"}, // a form and a synonym
		{"create a new repository", "git.create_repository"},
		{"find all files matching *.go", "fs.search_files"},
		{"screnshot", "web.take_screenshot"}, // a typo
		{"clik the button", "web.click"},
		{"read_file", "fs.read_file"},   // the name itself first
		{"fs.read_", "fs.read_file"},    // a name's start: both read tools, in name order
		{"add two numbers", "calc.sum"}, // "add" is no substring match of "address"
		{"look up an address", "notes.address_book"},
	} {
		got := find(t, ix, tc.query, "", 0)
		if len(got) == 0 || got[0] != tc.first {
			t.Errorf("find(%q) = %v, want %s first", tc.query, got, tc.first)
		}
	}
	if got := find(t, ix, "fs.read_", "", 0); fmt.Sprint(got[:2]) != "[fs.read_file fs.read_multiple_files]" {
		t.Errorf("find(fs.read_) = %v, want both read tools first", got)
	}
	for _, q := range []string{"the of and a to", "zzzz qqqq", ""} {
		got := find(t, ix, q, "", 0)
		if q == "" && len(got) != findLimit || q != "" && len(got) != 0 {
			t.Errorf("find(%q) = %v", q, got)
		}
	}
}

// Ties keep name order, and the same query gives the same result, bit for
// bit, however often it is asked and however the index was built.
func TestFindDeterministic(t *testing.T) {
	ix := index(tool("c", "x3", "Same words here."), tool("a", "x1", "Same words here."), tool("b", "x2", "Same words here."))
	if got := find(t, ix, "same words", "", 0); fmt.Sprint(got) != "[a.x1 b.x2 c.x3]" {
		t.Errorf("equal scores = %v, want name order", got)
	}
	first := find(t, newToolIndex(manyTools(3000), nil, nil), "reads records", "", maxFindLimit)
	for range 20 {
		if again := find(t, newToolIndex(manyTools(3000), nil, nil), "reads records", "", maxFindLimit); !slices.Equal(again, first) {
			t.Fatalf("again %v, first %v", again[:5], first[:5])
		}
	}
}

func TestFindServerAndLimit(t *testing.T) {
	ix := newToolIndex(manyTools(3000), map[string]string{"srv3": "Manages the glob archive."}, nil)
	if got := find(t, ix, "files glob", "", 0); fmt.Sprint(slices.Sorted(slices.Values(got[:3]))) != "[srv7.tool_1007 srv7.tool_2007 srv7.tool_7]" {
		t.Errorf("files glob = %v", got)
	}
	if got := find(t, ix, "files glob", "srv1", 0); len(got) != 0 {
		t.Errorf("files glob on srv1 = %v, want none", got)
	}
	// A server's instructions are searched too, for each of its tools.
	if got := find(t, ix, "archive", "", 3); fmt.Sprint(got) != "[srv3.tool_1003 srv3.tool_1013 srv3.tool_1023]" {
		t.Errorf("archive = %v, want srv3's tools", got)
	}
	// The server's name is searched, and a query that names it wants it.
	if got := find(t, ix, "srv4 tool", "", 3); len(got) != 3 || !strings.HasPrefix(got[0], "srv4.") {
		t.Errorf("srv4 tool = %v", got)
	}
	for _, limit := range []int{1, 8, 50} {
		if got := find(t, ix, "tool number", "", limit); len(got) != limit {
			t.Errorf("limit %d: %d tools", limit, len(got))
		}
	}
	if got := find(t, ix, "", "srv2", 0); len(got) != findLimit || got[0] != "srv2.tool_1002" {
		t.Errorf("no query, srv2: %v", got)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.find(cancelled, findQuery{Query: "tool", Limit: 8}); !errors.Is(err, context.Canceled) {
		t.Errorf("find with a cancelled context = %v, want context.Canceled", err)
	}
}

// A result carries what calling the tool needs: its front name, its first
// line of description, its input schema when small (without "$schema"),
// and readOnly when its annotations say so and do not also say
// destructive.
func TestFoundTool(t *testing.T) {
	no, yes := false, true
	big := `{"type":"object","properties":{"x":{"type":"string","description":"` + strings.Repeat("long ", 200) + `"}}}`
	ix := index(
		func() (string, toolRoute) {
			return route("s", "small", "  Small one.\nMore text.", `{"$schema":"http://json-schema.org/draft-07/schema#", "type":"object","properties":{"q":{"type":"string"}}}`,
				&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no})
		},
		func() (string, toolRoute) {
			return route("s", "large", "Large one.", big, &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes})
		},
	)
	found, err := ix.find(context.Background(), findQuery{Query: "one", Limit: 8})
	if err != nil || len(found) != 2 {
		t.Fatal(found, err)
	}
	got, _ := json.Marshal(found)
	want := `[{"name":"s.large","description":"Large one."},{"name":"s.small","description":"Small one.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}},"readOnly":true}]`
	if string(got) != want {
		t.Errorf("found:\n got %s\nwant %s", got, want)
	}
}

// A table whose tools changed reuses the analysis of the tools that did
// not, and analyses the others.
func TestToolIndexReuse(t *testing.T) {
	routes := manyTools(100)
	first := newToolIndex(routes, nil, nil)
	name, changed := route("srv1", "tool_1", "Now it sends mail.", `{"type":"object"}`, nil)
	routes[name] = changed
	next := newToolIndex(routes, nil, first)
	for n, i := range next.byName {
		same := next.docs[i] == first.docs[first.byName[n]]
		if same == (n == name) {
			t.Errorf("%s: analysis reused %v", n, same)
		}
	}
	if got := find(t, next, "mail", "", 0); fmt.Sprint(got) != "[srv1.tool_1]" {
		t.Errorf("mail = %v", got)
	}
}

// find_tools' answer: text only, the tools and, when there are none, what
// to try; a server that does not exist is named and the servers listed.
func TestFindToolsResult(t *testing.T) {
	ix := newToolIndex(manyTools(30), nil, nil)
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
		`{"query":"tool","limit":0}`:                                             "limit must be a whole number of at least 1",
		`{"query":"tool","limit":1.5}`:                                           "limit must be a whole number of at least 1",
		`{"query":"` + strings.Repeat("ww ", 100000) + many(maxFindWords) + `"}`: fmt.Sprintf("more than %d distinct words", maxFindWords),
	} {
		if _, err := call(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s: %v, want %q", args, err, want)
		}
	}
	if got, err := call(`{"query":"tool","limit":1000}`); err != nil || strings.Count(got, `\"name\"`) != 30 {
		t.Errorf("limit 1000 (over %d: the most) = %.80s, %v", maxFindLimit, got, err)
	}
	if _, err := call(`{"query":"` + strings.Repeat("ww ", 100000) + many(maxFindWords-1) + `"}`); err != nil {
		t.Errorf("%d distinct words: %v", maxFindWords, err)
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
// typical one (a sentence), one word in every tool, a typo, and the
// largest allowed: 32 distinct words, each in every tool.
func BenchmarkFindTools(b *testing.B) {
	ix := newToolIndex(manyTools(10000), nil, nil)
	for name, query := range map[string]string{
		"sentence": "search the files by a glob pattern",
		"all":      "tool",
		"typo":     "serach filse",
		"32-words": "tool number reads writes records kind store second line k1 k2 k3 k4 k5 k6 k7 k8 k9 k10 k11 k12 k13 k14 k15 k16 k17 k18 k19 k20 k21 k22 k23",
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if found, err := ix.find(context.Background(), findQuery{Query: query, Limit: findLimit}); err != nil || len(found) == 0 {
					b.Fatal(len(found), err)
				}
			}
		})
	}
}

// BenchmarkToolIndex builds the index of the 217 tools of 15 npm servers
// (testdata/toolsets), and of 10,000 tools: from nothing, and again after
// one tool changed.
func BenchmarkToolIndex(b *testing.B) {
	ts := loadToolsets(b)
	b.Run("npm-217", func(b *testing.B) {
		for b.Loop() {
			newToolIndex(ts.lazy.routes, ts.instructions, nil)
		}
	})
	routes := manyTools(10000)
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			newToolIndex(routes, nil, nil)
		}
	})
	b.Run("one-changed", func(b *testing.B) {
		prev := newToolIndex(routes, nil, nil)
		name, r := route("srv1", "tool_1", "Now it sends mail.", `{"type":"object"}`, nil)
		routes[name] = r
		for b.Loop() {
			newToolIndex(routes, nil, prev)
		}
	})
}

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
		var found struct{ Tools []foundTool }
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
