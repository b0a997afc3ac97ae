package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// manyServers is a plain configuration of n servers, in the list form or
// the map form (mcpServers), compact enough that 60,000 fit the file size limit.
func manyServers(n int, mapForm bool) string {
	var b strings.Builder
	if mapForm {
		b.WriteString("{\"mcpServers\": {\n")
		for i := range n {
			sep := ","
			if i == n-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "\"s%d\":{\"command\":\"npx\",\"args\":[\"-y\",\"p%d\"],\"env\":{\"K\":\"v\"}}%s\n", i, i, sep)
		}
		b.WriteString("}}\n")
		return b.String()
	}
	b.WriteString("servers:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {name: s%d, command: npx, args: [-y, p%d], env: {K: v}}\n", i, i)
	}
	return b.String()
}

// A plain file is never "too complex", however large: the budget bounds
// what aliases and merge keys add, not the file's own size.
func TestLargePlainConfigLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("60,000 servers")
	}
	// 20,000 servers are already far beyond the alias budget (maxSteps)
	// that a plain file of 60,000 used to exhaust.
	n := 60000
	if testutil.Race {
		n = 20000
	}
	for _, mapForm := range []bool{false, true} {
		t.Run(fmt.Sprintf("map=%v", mapForm), func(t *testing.T) {
			c := mustLoadQuiet(t, manyServers(n, mapForm))
			if len(c.Servers) != n {
				t.Fatalf("%d servers, want %d", len(c.Servers), n)
			}
		})
	}
}

// mustLoadQuiet is mustLoad without the file in the failure message.
func mustLoadQuiet(t testing.TB, text string) *Config {
	t.Helper()
	c, _, _, err := loadText(t, text, nil, Flags{})
	if err != nil {
		t.Fatalf("Load: %.500v", err)
	}
	return c
}

// BenchmarkLoadServers is the load time of a plain file by its number of
// servers.
func BenchmarkLoadServers(b *testing.B) {
	for _, n := range []int{100, 6000, 60000} {
		text := manyServers(n, false)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				mustLoadQuiet(b, text)
			}
		})
	}
}
