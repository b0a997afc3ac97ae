package importer

import (
	"strings"
	"testing"
)

// TestSecretRefNotImported: a client's file (a project's .mcp.json, from a
// repository anyone may write) cannot name one of the user's secrets: a
// "${secret:NAME}" in it is imported as literal text, whichever way the
// client expands variables.
func TestSecretRefNotImported(t *testing.T) {
	for _, style := range []varStyle{varsShell, varsEditor, varsDollar, varsNone} {
		v := varContext{client: &Client{Vars: style}}
		out, _ := v.translate("Bearer ${secret:github.GITHUB_TOKEN}")
		if strings.Contains(strings.ReplaceAll(out, "$${", ""), "${secret:") {
			t.Errorf("style %v: %q keeps the reference", style, out)
		}
	}
}
