package toolsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test's limits, find_tools' own (gateway/lazy.go).
const (
	findLimit    = 8
	maxFindLimit = 50
)

// manyTools is n backend tools over 10 servers, with descriptions of
// realistic length.
func manyTools(n int) []Doc {
	var docs []Doc
	for i := range n {
		server := fmt.Sprintf("srv%d", i%10)
		desc := fmt.Sprintf("Tool number %d reads and writes records of kind k%d in the store.\nSecond line.", i, i%97)
		if i%1000 == 7 {
			desc = "Search Files by glob pattern " + desc
		}
		docs = append(docs, route(server, fmt.Sprintf("tool_%d", i), desc, `{"type":"object"}`, nil))
	}
	// In name order, as the gateway gives them.
	slices.SortFunc(docs, func(a, b Doc) int { return strings.Compare(a.Name, b.Name) })
	return docs
}

// replace puts d in place of the tool of its name in docs.
func replace(docs []Doc, d Doc) {
	docs[slices.IndexFunc(docs, func(o Doc) bool { return o.Name == d.Name })] = d
}

// route is a backend tool of server with its own name, description and
// input schema.
func route(server, own, desc, schema string, ann *mcp.ToolAnnotations) Doc {
	name := server + "." + own
	t := &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema), Annotations: ann}
	def, err := wire.Marshal(t)
	if err != nil {
		panic(err)
	}
	readOnly := ann != nil && ann.ReadOnlyHint && (ann.DestructiveHint == nil || !*ann.DestructiveHint)
	return Doc{Name: name, Own: own, Server: server, Def: def, Tool: t, ReadOnly: readOnly}
}

func index(docs ...Doc) *Index {
	return New(docs, nil, nil)
}

func tool(server, own, desc string) Doc {
	return route(server, own, desc, `{"type":"object"}`, nil)
}

func names(ts []Hit) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func find(t *testing.T, ix *Index, query, server string, limit int) []string {
	t.Helper()
	if limit == 0 {
		limit = findLimit
	}
	found, err := ix.Find(context.Background(), Query{Query: query, Server: server, Limit: limit})
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
		if got := EditDistance(tc.a, tc.b, tc.max); got != tc.want {
			t.Errorf("EditDistance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.max, got, tc.want)
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
	first := find(t, New(manyTools(3000), nil, nil), "reads records", "", maxFindLimit)
	for range 20 {
		if again := find(t, New(manyTools(3000), nil, nil), "reads records", "", maxFindLimit); !slices.Equal(again, first) {
			t.Fatalf("again %v, first %v", again[:5], first[:5])
		}
	}
}

func TestFindServerAndLimit(t *testing.T) {
	ix := New(manyTools(3000), map[string]string{"srv3": "Manages the glob archive."}, nil)
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
	if _, err := ix.Find(cancelled, Query{Query: "tool", Limit: 8}); !errors.Is(err, context.Canceled) {
		t.Errorf("find with a cancelled context = %v, want context.Canceled", err)
	}
}

// A result carries what calling the tool needs: its front name, its first
// line of description, its input schema when small (without "$schema"),
// and readOnly when its annotations say so and do not also say
// destructive.
func TestFindHit(t *testing.T) {
	no, yes := false, true
	big := `{"type":"object","properties":{"x":{"type":"string","description":"` + strings.Repeat("long ", 200) + `"}}}`
	ix := index(
		route("s", "small", "  Small one.\nMore text.", `{"$schema":"http://json-schema.org/draft-07/schema#", "type":"object","properties":{"q":{"type":"string"}}}`,
			&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no}),
		route("s", "large", "Large one.", big, &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}),
	)
	found, err := ix.Find(context.Background(), Query{Query: "one", Limit: 8})
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
func TestFindIndexReuse(t *testing.T) {
	docs := manyTools(100)
	first := New(docs, nil, nil)
	changed := route("srv1", "tool_1", "Now it sends mail.", `{"type":"object"}`, nil)
	name := changed.Name
	replace(docs, changed)
	next := New(docs, nil, first)
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

// typical one (a sentence), one word in every tool, a typo, and the
// largest allowed: 32 distinct words, each in every tool.
func BenchmarkFindTools(b *testing.B) {
	ix := New(manyTools(10000), nil, nil)
	for name, query := range map[string]string{
		"sentence": "search the files by a glob pattern",
		"all":      "tool",
		"typo":     "serach filse",
		"32-words": "tool number reads writes records kind store second line k1 k2 k3 k4 k5 k6 k7 k8 k9 k10 k11 k12 k13 k14 k15 k16 k17 k18 k19 k20 k21 k22 k23",
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if found, err := ix.Find(context.Background(), Query{Query: query, Limit: findLimit}); err != nil || len(found) == 0 {
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
	npm, instructions := loadToolsets(b)
	b.Run("npm-217", func(b *testing.B) {
		for b.Loop() {
			New(npm, instructions, nil)
		}
	})
	docs := manyTools(10000)
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			New(docs, nil, nil)
		}
	})
	b.Run("one-changed", func(b *testing.B) {
		prev := New(docs, nil, nil)
		replace(docs, route("srv1", "tool_1", "Now it sends mail.", `{"type":"object"}`, nil))
		for b.Loop() {
			New(docs, nil, prev)
		}
	})
}

// loadToolsets is the tools of the 15 npm servers the gateway's
// find_tools measurements use (gateway/testdata/toolsets), each named
// server.tool as the gateway's default prefix names it, and the servers'
// instructions.
func loadToolsets(tb testing.TB) ([]Doc, map[string]string) {
	tb.Helper()
	files, err := filepath.Glob("../../testdata/toolsets/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no toolsets: %v", err)
	}
	var docs []Doc
	instructions := make(map[string]string)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var set struct {
			Server       string            `json:"server"`
			Instructions string            `json:"instructions"`
			Tools        []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &set); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		instructions[set.Server] = set.Instructions
		for _, def := range set.Tools {
			// As the gateway decodes a definition (frontTool): the
			// schema stays raw.
			var w struct {
				Name        string               `json:"name"`
				Title       string               `json:"title"`
				Description string               `json:"description"`
				InputSchema json.RawMessage      `json:"inputSchema"`
				Annotations *mcp.ToolAnnotations `json:"annotations"`
			}
			if err := json.Unmarshal(def, &w); err != nil {
				tb.Fatal(err)
			}
			t := &mcp.Tool{Name: w.Name, Title: w.Title, Description: w.Description, InputSchema: w.InputSchema, Annotations: w.Annotations}
			var line bytes.Buffer
			if err := json.Compact(&line, def); err != nil {
				tb.Fatal(err)
			}
			docs = append(docs, Doc{Name: set.Server + "." + w.Name, Own: w.Name, Server: set.Server, Def: line.Bytes(), Tool: t})
		}
	}
	return docs, instructions
}
