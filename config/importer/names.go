package importer

import (
	"fmt"
	"regexp"
	"strings"
)

var nameBad = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// sanitize makes a client's server name a gateway name: [A-Za-z0-9_-]+.
func sanitize(name string) string {
	s := strings.Trim(nameBad.ReplaceAllString(name, "_"), "_")
	if s == "" {
		return "server"
	}
	return s
}

// uniqueNames gives each entry a sanitised name, adding _2, _3, ... to
// later entries whose name is taken.
func uniqueNames(es []Entry) []string {
	taken := map[string]bool{}
	out := make([]string, len(es))
	// Names that need no change keep them, whatever their order.
	for _, e := range es {
		if sanitize(e.Key) == e.Key {
			taken[e.Key] = true
		}
	}
	seen := map[string]bool{}
	for i, e := range es {
		base := sanitize(e.Key)
		if base == e.Key && !seen[base] {
			seen[base] = true
			out[i] = base
			continue
		}
		name := base
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s_%d", base, n)
		}
		taken[name], seen[name] = true, true
		out[i] = name
	}
	return out
}
