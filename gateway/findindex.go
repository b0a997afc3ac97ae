package gateway

import (
	"context"
	"slices"
	"sort"
	"strings"
)

// maxFindWords bounds the distinct words of one gateway.find_tools query:
// each word costs a pass over the candidates, and no real query needs more.
const maxFindWords = 32

// toolIndex is what gateway.find_tools searches, built once per change of
// the tool tables rather than per query: every backend tool's name, title
// and description, lower-cased, in one text, in name order. A query finds
// its most selective word's occurrences in that text with strings.Index
// (which skips through it at memory speed, not tool by tool), and checks
// its other words on those candidates only.
type toolIndex struct {
	text  string      // each tool's haystack followed by '\x00'
	start []int       // where each tool's haystack starts in text
	tools []foundTool // in name order, as start
}

// newToolIndex indexes the backend tools of routes.
func newToolIndex(routes map[string]toolRoute) *toolIndex {
	ix := &toolIndex{}
	var b strings.Builder
	for _, name := range sortedKeys(routes) {
		r := routes[name]
		if r.kind != backendTool {
			continue
		}
		ix.start = append(ix.start, b.Len())
		ix.tools = append(ix.tools, foundTool{Name: name, Server: r.server, Description: firstLine(r.tool.Description)})
		// A match that spans two tools fails the check against the
		// tool's own haystack in find.
		b.WriteString(strings.ToLower(strings.ReplaceAll(name+" "+r.tool.Title+" "+r.tool.Description, "\x00", " ")))
		b.WriteByte(0)
	}
	ix.text = b.String()
	return ix
}

// find returns the tools whose name, title or description contains every
// word (lower-case), of server if it is not "". It stops with ctx's error
// when ctx is done.
func (ix *toolIndex) find(ctx context.Context, words []string, server string) ([]foundTool, error) {
	found := []foundTool{}
	if len(words) == 0 {
		for i, t := range ix.tools {
			if i%1024 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if server == "" || t.Server == server {
				found = append(found, t)
			}
		}
		return found, nil
	}
	// The longest word is usually the rarest: its occurrences are the
	// candidates.
	first := words[0]
	for _, w := range words[1:] {
		if len(w) > len(first) {
			first = w
		}
	}
	n := 0
	for at := 0; at < len(ix.text); n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		k := strings.Index(ix.text[at:], first)
		if k < 0 {
			break
		}
		i := sort.SearchInts(ix.start, at+k+1) - 1 // the tool the match is in
		at = ix.end(i) + 1                         // one match per tool is enough
		t := ix.tools[i]
		if server != "" && t.Server != server {
			continue
		}
		hay := ix.text[ix.start[i]:ix.end(i)]
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(hay, w) }) {
			found = append(found, t)
		}
	}
	return found, nil
}

// end is where tool i's haystack ends (its '\x00').
func (ix *toolIndex) end(i int) int {
	if i+1 < len(ix.start) {
		return ix.start[i+1] - 1
	}
	return len(ix.text) - 1
}

// queryWords splits a query into its distinct lower-case words, or says
// why it is too large.
func queryWords(query string) ([]string, bool) {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if !slices.Contains(words, w) {
			if len(words) == maxFindWords {
				return nil, false
			}
			words = append(words, w)
		}
	}
	return words, true
}
