package gateway

import (
	"regexp"
	"strings"
	"testing"
)

var (
	mcpName    = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	strictName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

func TestNamerName(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		sep, prefix, own string
		strict           bool
		want             string
	}{
		{".", "filesystem", "read_file", false, "filesystem.read_file"},
		{".", "filesystem", "read_file", true, "filesystem__read_file"},
		{".", "", "read_file", false, "read_file"},
		{".", "", "read_file", true, "read_file"},
		{".", "fs", "a b/c:d", false, "fs.a_b_c_d"},
		{".", "fs", "v1.read", false, "fs.v1.read"},
		{".", "fs", "v1.read", true, "fs__v1_read"},
		{"_", "fs", "read", true, "fs_read"},
		{"-", "fs", "read", false, "fs-read"},
		{"::", "fs", "read", false, "fs__read"}, // sanitised separator
		{".", "fs", "日本語", false, "fs.___"},
		{".", "fs", "", false, "fs."},
	}
	for _, tt := range tests {
		got := namer{sep: tt.sep, strict: tt.strict}.name(tt.prefix, tt.own)
		if got != tt.want {
			t.Errorf("namer{%q,%v}.name(%q,%q) = %q, want %q", tt.sep, tt.strict, tt.prefix, tt.own, got, tt.want)
		}
	}
	// Long names are cut to the limit with a hash of the original, so two
	// long names that share a prefix stay distinct and valid.
	for _, strict := range []bool{false, true} {
		n := namer{sep: ".", strict: strict}
		a, b := n.name("srv", long+"a"), n.name("srv", long+"b")
		if a == b {
			t.Errorf("strict=%v: long names collide: %q", strict, a)
		}
		re, limit := mcpName, maxName
		if strict {
			re, limit = strictName, maxStrictName
		}
		for _, s := range []string{a, b} {
			if len(s) != limit || !re.MatchString(s) {
				t.Errorf("strict=%v: %q (len %d) is not a valid name of length %d", strict, s, len(s), limit)
			}
		}
		if again := n.name("srv", long+"a"); again != a {
			t.Errorf("not deterministic: %q then %q", a, again)
		}
	}
}

func TestNameTableCollisions(t *testing.T) {
	for _, strict := range []bool{false, true} {
		tab := newNameTable(namer{sep: ".", strict: strict}, "answer")
		got := []string{
			tab.assign("a", "", "answer"),     // reserved by the answer tool
			tab.assign("a", "x", "t"),         // x.t
			tab.assign("b", "x", "t"),         // same prefix and name: collision
			tab.assign("c", "x", "t"),         // and again
			tab.assign("d", "x.t", ""),        // "x.t." differs
			tab.assign("e", "", "x.t"),        // "x.t" again, unprefixed
			tab.assign("f", "s", "dup"),       // fine
			tab.assign("f", "s", "dup_extra"), // fine
		}
		seen := map[string]bool{}
		for _, g := range got {
			if seen[g] {
				t.Fatalf("strict=%v: duplicate name %q in %q", strict, g, got)
			}
			seen[g] = true
			re := mcpName
			if strict {
				re = strictName
			}
			if !re.MatchString(g) {
				t.Errorf("strict=%v: invalid name %q", strict, g)
			}
		}
		if got[0] == "answer" {
			t.Errorf("strict=%v: backend took the reserved name answer", strict)
		}
		// Plain: answer, b's and c's x.t, and e's unprefixed x.t collide.
		// Strict: e's name becomes x_t, which is free.
		wantCollisions := 4
		if strict {
			wantCollisions = 3
		}
		if len(tab.collisions) != wantCollisions {
			t.Errorf("strict=%v: collisions recorded = %d, want %d: %+v", strict, len(tab.collisions), wantCollisions, tab.collisions)
		}
		// The same input order gives the same names.
		tab2 := newNameTable(namer{sep: ".", strict: strict}, "answer")
		again := []string{
			tab2.assign("a", "", "answer"), tab2.assign("a", "x", "t"), tab2.assign("b", "x", "t"), tab2.assign("c", "x", "t"),
			tab2.assign("d", "x.t", ""), tab2.assign("e", "", "x.t"), tab2.assign("f", "s", "dup"), tab2.assign("f", "s", "dup_extra"),
		}
		for i := range got {
			if got[i] != again[i] {
				t.Errorf("strict=%v: item %d named %q then %q", strict, i, got[i], again[i])
			}
		}
	}
}

func TestStrictMode(t *testing.T) {
	for _, tt := range []struct {
		setting, client string
		want            bool
	}{
		{"auto", "claude-ai", true},
		{"auto", "claude-code", true},
		{"auto", "codex-mcp-client", true},
		{"auto", "Visual Studio Code", true},
		{"auto", "windsurf-client", true},
		{"auto", "GitHub Copilot", true},
		{"auto", "mcp-inspector", false},
		{"auto", "", false},
		{"true", "mcp-inspector", true},
		{"false", "claude-code", false},
	} {
		if got := strictMode(tt.setting, tt.client); got != tt.want {
			t.Errorf("strictMode(%q, %q) = %v, want %v", tt.setting, tt.client, got, tt.want)
		}
	}
}

func TestObjectSchema(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}}}`, `{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}}}`},
		{``, `{"type":"object"}`},
		{`null`, `{"type":"object"}`},
		{`[]`, `{"type":"object"}`},
		{`{"properties":{}}`, `{"properties":{},"type":"object"}`},
		{`{"type":"string"}`, `{"type":"object"}`},
	} {
		if got := string(objectSchema([]byte(tt.in))); got != tt.want {
			t.Errorf("objectSchema(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
