package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestPathologicalInputs(t *testing.T) {
	var fan strings.Builder
	fan.WriteString("x-0: &a0 {command: x}\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&fan, "x-%d: &a%d {<<: [*a%d, *a%d], k%d: v}\n", i, i, i-1, i-1, i)
	}
	fan.WriteString("mcpServers: {s: *a39}\n")
	var laughs strings.Builder
	laughs.WriteString("x-a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for i := 0; i < 8; i++ {
		n := fmt.Sprintf("b%d", i)
		fmt.Fprintf(&laughs, "x-%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	laughs.WriteString("search: {defaults: {domains: *" + prev + "}}\n")
	for name, text := range map[string]string{
		"merge fan-out": fan.String(),
		"laughs":        laughs.String(),
		"self alias":    "a: &a [*a]\n",
		"deep":          strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		"deep map":      strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000),
		"many keys":     strings.Repeat("servers: []\n", 3),
	} {
		t.Run(name, func(t *testing.T) {
			// Expanded, the laughs and the fan-out would not end (the
			// test's timeout would); how long a load takes is not
			// asserted here (no wall-clock bounds in tests).
			_, _, _, err := loadText(t, text, nil, Flags{})
			if err != nil {
				checkOnlyErrors(t, err)
			}
			t.Logf("%.200v", err)
		})
	}
}
