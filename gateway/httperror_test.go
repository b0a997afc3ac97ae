package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The HTTP front writes the errors it answers itself through refuseHTTP or
// writeJSONError (httperror.go), so that what a refusal looks like is
// decided in one place: no other file of the package calls http.Error.
func TestHTTPErrorsThroughOneWriter(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "httperror.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Error" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "http" {
				t.Errorf("%s: http.Error: use refuseHTTP (httperror.go)", fset.Position(sel.Pos()))
			}
			return true
		})
	}
}
