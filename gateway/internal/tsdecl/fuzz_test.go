package tsdecl

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSchemaToTS: whatever a backend's schemas are, a declaration is
// made, within maxOut, and it is TypeScript. The seeds (testdata/fuzz)
// are real schemas and the hostile shapes of TestHostileSchemas, small.
func FuzzSchemaToTS(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"array","items":{"$ref":"#/$defs/A"}}]}}}`,
		`{"enum":[1,"a",null,{"k":[true]}],"nullable":true}`,
	} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, in, out string) {
		got := declareAll([]Tool{{Name: "t", Description: in, InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out)}})
		if len(got) > maxOut {
			t.Fatalf("%d bytes", len(got))
		}
		if !strings.HasSuffix(got, "}\ndeclare var tools: Tools;\n") || strings.Contains(got, "\x00") {
			t.Fatalf("not a declaration: %q", got)
		}
		if errs := parseTS(got); len(errs) > 0 {
			t.Fatalf("not TypeScript: %s\n%s", strings.Join(errs, "\n"), got)
		}
	})
}
