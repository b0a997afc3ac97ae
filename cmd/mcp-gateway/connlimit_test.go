package main

import "testing"

// TestConnectionLimit: the connection limit derived from the open-file
// limit leaves the backends half, and a configured one is kept, with a
// warning when it leaves them little.
func TestConnectionLimit(t *testing.T) {
	for _, c := range []struct {
		configured int
		files      uint64
		want       int
		warn       bool
	}{
		{0, 1024, 480, false},
		{0, 256, 96, false},
		{0, 40, 1, false},
		{0, 1 << 20, maxDerivedConnections, false},
		{0, 0, maxDerivedConnections, false}, // unknown (Windows)
		{100, 1024, 100, false},
		{900, 1024, 900, true},
		{900, 0, 900, false},
	} {
		got, warn := connectionLimit(c.configured, c.files)
		if got != c.want || (warn != "") != c.warn {
			t.Errorf("connectionLimit(%d, %d) = %d, %q; want %d, warning %v", c.configured, c.files, got, warn, c.want, c.warn)
		}
	}
}
