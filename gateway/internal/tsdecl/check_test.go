package tsdecl

import (
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
)

// parseTS reports the syntax errors of TypeScript source, parsed by
// esbuild (tsc is not installed here: esbuild's parser checks the
// syntax, not the types). A script that calls the declared tools is
// appended, so that the declarations are read as a script's would be.
func parseTS(src string) []string {
	res := api.Transform(src+"\nexport async function main() { return await tools[\"x\"]({}); }\n", api.TransformOptions{
		Loader:   api.LoaderTS,
		LogLevel: api.LogLevelSilent,
	})
	return api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
}

// TestParseTSCatches shows that parseTS rejects broken declarations,
// so that a test passing through it checks something.
func TestParseTSCatches(t *testing.T) {
	for _, bad := range []string{
		`interface Tools { "a"(args: { a: }): Promise<string>; } declare var tools: Tools;`,
		`interface Tools { "a"(args: { a: string; ): Promise<string>; } declare var tools: Tools;`,
		`type x = { a: string } | ;`,
		`interface Tools { a.b(args: {}): Promise<string>; }`,
		`interface Tools { /** a */ b */ "c"(args: {}): Promise<string>; }`,
		`type -a = string;`,
	} {
		if errs := parseTS(bad); len(errs) == 0 {
			t.Errorf("parsed without errors: %s", bad)
		}
	}
	if errs := parseTS(`interface Tools { "a.b"(args: { "x-y"?: (string | null)[] }): Promise<string | object>; } declare var tools: Tools;`); len(errs) > 0 {
		t.Errorf("a good declaration: %s", strings.Join(errs, "\n"))
	}
}
