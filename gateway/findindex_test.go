package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// manyTools is n backend tools over 10 servers, with descriptions of
// realistic length, plus a meta tool that find_tools never returns.
func manyTools(n int) map[string]toolRoute {
	routes := map[string]toolRoute{"gateway.find_tools": {kind: metaTool, tool: &mcp.Tool{Name: "gateway.find_tools", Description: "files"}}}
	for i := range n {
		server := fmt.Sprintf("srv%d", i%10)
		name := fmt.Sprintf("%s.tool_%d", server, i)
		desc := fmt.Sprintf("Tool number %d reads and writes records of kind k%d in the store.\nSecond line.", i, i%97)
		if i%1000 == 7 {
			desc = "Search Files by glob pattern " + desc
		}
		routes[name] = toolRoute{kind: backendTool, server: server, own: fmt.Sprintf("tool_%d", i), tool: &mcp.Tool{Name: name, Description: desc}}
	}
	return routes
}

func names(ts []foundTool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestToolIndexFind(t *testing.T) {
	ix := newToolIndex(manyTools(3000))
	ctx := context.Background()
	for _, tc := range []struct {
		query, server string
		want          []string
	}{
		{"files GLOB", "", []string{"srv7.tool_1007", "srv7.tool_2007", "srv7.tool_7"}},
		{"files glob", "srv7", []string{"srv7.tool_1007", "srv7.tool_2007", "srv7.tool_7"}},
		{"files glob", "srv1", nil},
		{"ile glo k7", "", []string{"srv7.tool_7"}}, // substrings, every word
		{"tool_2999", "", []string{"srv9.tool_2999"}},
		{"files nowhere", "", nil},
	} {
		words, _ := queryWords(tc.query)
		got, err := ix.find(ctx, words, tc.server)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(names(got)) != fmt.Sprint(tc.want) {
			t.Errorf("find(%q, %q) = %v, want %v", tc.query, tc.server, names(got), tc.want)
		}
	}
	all, _ := ix.find(ctx, nil, "")
	if len(all) != 3000 || all[0].Name != "srv0.tool_0" || all[0].Description != "Tool number 0 reads and writes records of kind k0 in the store." {
		t.Errorf("no words: %d tools, first %+v", len(all), all[0])
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ix.find(cancelled, []string{"tool"}, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("find with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestQueryWords(t *testing.T) {
	if w, ok := queryWords("  Read  FILE read\tfile x "); !ok || fmt.Sprint(w) != "[read file x]" {
		t.Errorf("queryWords = %v, %v", w, ok)
	}
	many := strings.Repeat("w ", 100000) // repeats count once
	for i := range maxFindWords - 1 {
		many += fmt.Sprintf(" w%d", i)
	}
	if w, ok := queryWords(many); !ok || len(w) != maxFindWords {
		t.Errorf("%d distinct words: %d, %v", maxFindWords, len(w), ok)
	}
	if _, ok := queryWords(many + " one-more"); ok {
		t.Errorf("%d distinct words accepted", maxFindWords+1)
	}
}

// BenchmarkFindTools is one gateway.find_tools query over 10,000 tools:
// a typical one (two words, three matches), one word in every tool, and
// the largest allowed: 32 distinct words, each in every tool.
func BenchmarkFindTools(b *testing.B) {
	ix := newToolIndex(manyTools(10000))
	everywhere := strings.Fields("t o l n u m b e r a d s w i c k h srv tool number reads writes records kind store second line the and of in rea")
	for name, words := range map[string][]string{
		"typical":  {"files", "glob"},
		"all":      {"tool"},
		"32-words": everywhere,
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if found, err := ix.find(context.Background(), words, ""); err != nil || len(found) == 0 {
					b.Fatal(len(found), err)
				}
			}
		})
	}
}
