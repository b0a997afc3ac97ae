package backends

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMaskJSON: a definition that quotes a secret's value has it masked
// wherever it stands, in any of the ways JSON writes it, and stays JSON.
func TestMaskJSON(t *testing.T) {
	var v secretValues
	v.set(map[string]string{"k": `a/b"<c>-1`, "n": "90210345", "pem": "line-one-aaaa\nline-two-bbbb"})
	for _, tc := range []struct{ in, want string }{
		{`{"description":"key a/b\"\u003cc\u003e-1 here"}`, `{"description":"key *** here"}`},
		{`{"description":"key a\/b\"<c>-1"}`, `{"description":"key ***"}`},
		{`{"description":"pem line-one-aaaa\nline-two-bbbb"}`, `{"description":"pem ***"}`},
		{`{"description":"only line-two-bbbb"}`, `{"description":"only ***"}`},
		{`{"default":90210345,"x":"90210345"}`, `{"default":"***","x":"***"}`},
		{`{"a":1}`, `{"a":1}`},
	} {
		got := string(v.maskJSON(json.RawMessage(tc.in)))
		if got != tc.want {
			t.Errorf("maskJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := v.mask("the key a/b\"<c>-1 and line-two-bbbb"); strings.Contains(got, "a/b") || strings.Contains(got, "bbbb") {
		t.Errorf("mask: %q", got)
	}
}
