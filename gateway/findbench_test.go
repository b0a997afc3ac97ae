package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/toolsearch"
)

// The find_tools measurements over the real tool lists of 15 npm MCP
// servers (testdata/toolsets, scripts/capture-toolsets) and 74 needs as a
// model writes them (testdata/findneeds.json). docs/benchmarks.md has the
// figures.

// toolsets is the captured servers' tools as one gateway's tables: in
// lazy mode (what find_tools searches and the meta tools listed) and in
// full mode (every tool listed).
type toolsets struct {
	lazy, full   *toolTable
	instructions map[string]string
}

func loadToolsets(tb testing.TB) toolsets {
	tb.Helper()
	files, err := filepath.Glob("testdata/toolsets/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no toolsets: %v", err)
	}
	var ts toolsets
	ts.instructions = make(map[string]string)
	var tools []backends.Tool
	var servers []config.Server
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
		servers = append(servers, config.Server{Name: set.Server, Prefix: set.Server})
		ts.instructions[set.Server] = set.Instructions
		for _, t := range set.Tools {
			var name struct{ Name string }
			if err := json.Unmarshal(t, &name); err != nil {
				tb.Fatal(err)
			}
			// A server writes each message on one line: its tools come
			// compact, as the gateway lists them.
			var line bytes.Buffer
			if err := json.Compact(&line, t); err != nil {
				tb.Fatal(err)
			}
			tools = append(tools, backends.Tool{Server: set.Server, Name: name.Name, Raw: line.Bytes()})
		}
	}
	table := func(mode string) *toolTable {
		cfg := config.Defaults()
		cfg.Gateway.AnswerTools = false
		cfg.Gateway.ToolsMode = mode
		cfg.Servers = servers
		g := New(Options{Config: cfg})
		routes, order := g.buildToolRoutes(g.namer(false), tools, g.prefixes())
		return &toolTable{tools: tools, routes: routes, order: order}
	}
	ts.lazy, ts.full = table("lazy"), table("full")
	return ts
}

func (ts toolsets) index() *toolsearch.Index {
	return ts.lazy.findIndex(func() map[string]string { return ts.instructions })
}

// listing is a tools/list result of the table's listed tools: every tool in
// full mode, the meta tools in lazy mode.
func (t *toolTable) listing() []byte {
	lazy := slices.ContainsFunc(t.order, func(name string) bool { return t.routes[name].kind == metaTool })
	var defs []string
	for _, name := range t.order {
		if r := t.routes[name]; !lazy || r.kind != backendTool {
			defs = append(defs, string(r.def))
		}
	}
	return []byte(`{"tools":[` + strings.Join(defs, ",") + `]}`)
}

type need struct {
	Query string   `json:"query"`
	Tools []string `json:"tools"`
}

func loadNeeds(tb testing.TB, file string) []need {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatal(err)
	}
	var f struct{ Needs []need }
	if err := json.Unmarshal(raw, &f); err != nil {
		tb.Fatal(err)
	}
	return f.Needs
}

// findFigures are one search's measurements over the needs.
type findFigures struct {
	recall1, recall5 float64 // share of needs with an acceptable tool first, in the first 5
	resultBytes      float64 // mean bytes of a find_tools result
	roundTrip        float64 // mean bytes of listing + find + describe (when needed) + call
	fullListing      int     // bytes of the full tools/list
	lazyListing      int     // bytes of lazy mode's tools/list
	maxResults       int
	misses           []string // the needs with no acceptable tool in the first 5
	seconds          []string // those with one in the first 5, not first
}

// searcher answers one find_tools call: the names it found, in order, the
// result as sent, and whether the model must describe the first tool
// before calling it.
type searcher func(query string) (names []string, result []byte, describe bool)

func measure(tb testing.TB, ts toolsets, needs []need, search searcher) findFigures {
	tb.Helper()
	fig := findFigures{fullListing: len(ts.full.listing()), lazyListing: len(ts.lazy.listing())}
	for _, n := range needs {
		names, result, describe := search(n.Query)
		fig.maxResults = max(fig.maxResults, len(names))
		ok := func(k int) bool {
			return slices.ContainsFunc(names[:min(k, len(names))], func(s string) bool { return slices.Contains(n.Tools, s) })
		}
		if ok(1) {
			fig.recall1++
		}
		if ok(5) {
			fig.recall5++
			if !ok(1) {
				fig.seconds = append(fig.seconds, fmt.Sprintf("%q: got %v", n.Query, names[:min(5, len(names))]))
			}
		} else {
			fig.misses = append(fig.misses, fmt.Sprintf("%q: got %v", n.Query, names[:min(5, len(names))]))
		}
		fig.resultBytes += float64(len(result))
		// What the model sends and reads to reach the tool: the listing,
		// the find_tools call and its result, describe_tool when the
		// result has no schema, and the call_tool wrapper around the
		// arguments (the arguments and the call's result are the same
		// as in full mode).
		trip := fig.lazyListing + len(findRequest(n.Query)) + len(result)
		if len(names) > 0 {
			if describe {
				trip += len(fmt.Sprintf(`{"name":"gateway.describe_tool","arguments":{"name":%q}}`, names[0]))
				trip += len(textResult(ts.lazy.routes[names[0]].def))
			}
			trip += len(fmt.Sprintf(`{"name":"gateway.call_tool","arguments":{"name":%q,"arguments":}}`, names[0]))
		}
		fig.roundTrip += float64(trip)
	}
	total := float64(len(needs))
	fig.recall1 /= total
	fig.recall5 /= total
	fig.resultBytes /= total
	fig.roundTrip /= total
	return fig
}

func findRequest(query string) []byte {
	b, _ := json.Marshal(map[string]any{"name": "gateway.find_tools", "arguments": map[string]any{"query": query}})
	return b
}

// ranked is find_tools as it is.
func ranked(tb testing.TB, ix *toolsearch.Index) searcher {
	return func(query string) ([]string, []byte, bool) {
		result, err := findTools(context.Background(), ix, metaArgs{Query: query}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		var r struct {
			Content []struct{ Text string }
		}
		var found struct{ Tools []toolsearch.Hit }
		if err := json.Unmarshal(result, &r); err != nil || len(r.Content) != 1 || json.Unmarshal([]byte(r.Content[0].Text), &found) != nil {
			tb.Fatalf("find_tools result: %s", result)
		}
		var names []string
		for _, t := range found.Tools {
			names = append(names, t.Name)
		}
		return names, result, len(found.Tools) > 0 && found.Tools[0].InputSchema == nil
	}
}

// substring is find_tools as it was before the ranking, for comparison:
// every word of the query a substring of the tool's name, title or
// description, lower-case; every match, in name order; the result as text
// and again as structuredContent; no schemas.
func substring(ts toolsets) searcher {
	type old struct {
		Name        string `json:"name"`
		Server      string `json:"server"`
		Description string `json:"description"`
	}
	return func(query string) ([]string, []byte, bool) {
		ws := strings.Fields(strings.ToLower(query))
		var found []old
		var names []string
		for _, name := range sortedKeys(ts.lazy.routes) {
			r := ts.lazy.routes[name]
			if r.kind != backendTool {
				continue
			}
			hay := strings.ToLower(name + " " + r.tool.Title + " " + r.tool.Description)
			if !slices.ContainsFunc(ws, func(w string) bool { return !strings.Contains(hay, w) }) {
				found = append(found, old{name, r.server, firstLine(r.tool.Description)})
				names = append(names, name)
			}
		}
		j := mustJSON(map[string]any{"tools": found})
		result := mustJSON(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(j)}}, "structuredContent": j})
		return names, result, true
	}
}

// firstLine is a description's first line, as the old search gave it.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	const max = 160
	if len(s) > max {
		s = wire.Truncate(s, max-3, "...")
	}
	return s
}

// The targets of the ranked search on the needs: recall@5 ≥ 0.95,
// recall@1 ≥ 0.8, never more than the limit, and a find → call round trip
// of at most 3% of the full listing.
func TestFindToolsRecall(t *testing.T) {
	ts := loadToolsets(t)
	fig := measure(t, ts, loadNeeds(t, "findneeds.json"), ranked(t, ts.index()))
	t.Logf("recall@1 %.3f, recall@5 %.3f, result %.0f B, round trip %.0f B of %d B (%.2f%%)",
		fig.recall1, fig.recall5, fig.resultBytes, fig.roundTrip, fig.fullListing, 100*fig.roundTrip/float64(fig.fullListing))
	for _, m := range fig.misses {
		t.Log("not in the first 5:", m)
	}
	for _, m := range fig.seconds {
		t.Log("not first:", m)
	}
	if fig.recall5 < 0.95 || fig.recall1 < 0.8 {
		t.Errorf("recall@1 %.3f, recall@5 %.3f: want at least 0.8 and 0.95", fig.recall1, fig.recall5)
	}
	if fig.maxResults > findLimit {
		t.Errorf("a query returned %d tools, more than the limit %d", fig.maxResults, findLimit)
	}
	if share := fig.roundTrip / float64(fig.fullListing); share > 0.03 {
		t.Errorf("round trip %.0f B is %.2f%% of the full listing, want at most 3%%", fig.roundTrip, 100*share)
	}
}

// BenchmarkFindToolsRecall reports, for find_tools as it is ("ranked") and
// as it was ("substring"), on the same needs in the same run (the tuning
// set, "needs", and the held-out one, "holdout"): recall@1 and
// recall@5, the mean bytes of a result, and the mean bytes of the whole
// find → call round trip beside those of the full listing; ns/op is one
// pass over all the needs.
func BenchmarkFindToolsRecall(b *testing.B) {
	ts := loadToolsets(b)
	for _, set := range []string{"needs", "holdout"} {
		needs := loadNeeds(b, map[string]string{"needs": "findneeds.json", "holdout": "findneeds-holdout.json"}[set])
		for _, search := range []string{"ranked", "substring"} {
			s := map[string]searcher{"ranked": ranked(b, ts.index()), "substring": substring(ts)}[search]
			b.Run(set+"/"+search, func(b *testing.B) {
				var fig findFigures
				for b.Loop() {
					fig = measure(b, ts, needs, s)
				}
				b.ReportMetric(fig.recall1, "recall@1")
				b.ReportMetric(fig.recall5, "recall@5")
				b.ReportMetric(fig.resultBytes, "result-B")
				b.ReportMetric(fig.roundTrip, "roundtrip-B")
				b.ReportMetric(float64(fig.fullListing), "full-listing-B")
				b.ReportMetric(float64(fig.lazyListing), "lazy-listing-B")
				b.ReportMetric(100*fig.roundTrip/float64(fig.fullListing), "roundtrip-%")
				b.ReportMetric(float64(fig.maxResults), "max-results")
			})
		}
	}
}
