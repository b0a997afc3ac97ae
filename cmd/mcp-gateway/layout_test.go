package main

import (
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layers ranks the product's top-level packages (docs/design.md, "Layout"):
// a package may import the packages of its own tree and of lower layers
// only, so that dependencies point one way.
var layers = map[string]int{
	"config":   0,
	"backends": 1,
	"answer":   1,
	"gateway":  2,
	"cmd":      3,
}

// topLevel is where the repository's Go code lives.
var topLevel = []string{"answer", "backends", "cmd", "config", "docs", "gateway", "scripts"}

// TestLayout checks the layout docs/design.md draws: the top level is the
// product's, no import runs against the layers (a back-arrow fails here
// with the file that makes it), and a package outside cmd/ that is neither
// one of the four top-level packages nor internal/ is one another tree
// imports: what nothing else needs is not importable.
func TestLayout(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mod := modulePath(t, root)

	// imports[pkg][imported] = the first file that imports it; test files
	// count for "imported by another tree" but not for the layers (a test
	// may reach anything its package cannot).
	type use struct {
		file string
		test bool
	}
	imports := map[string]map[string]use{}
	commands := map[string]bool{} // main packages: not importable
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(gotoken.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		if f.Name.Name == "main" {
			commands[pkg] = true
		}
		if imports[pkg] == nil {
			imports[pkg] = map[string]use{}
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip != mod && !strings.HasPrefix(ip, mod+"/") {
				continue
			}
			ip = strings.TrimPrefix(strings.TrimPrefix(ip, mod), "/")
			u, seen := imports[pkg][ip]
			if !seen || (u.test && !strings.HasSuffix(p, "_test.go")) {
				imports[pkg][ip] = use{file: filepath.ToSlash(filepath.Join(rel, filepath.Base(p))), test: strings.HasSuffix(p, "_test.go")}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	tree := func(pkg string) string { return strings.Split(pkg, "/")[0] }
	trees := map[string]bool{}
	for pkg := range imports {
		trees[tree(pkg)] = true
	}
	for tr := range trees {
		if !slices.Contains(topLevel, tr) {
			t.Errorf("%s/ at the top level holds Go code: the product's top level is %v (machinery goes into internal/ inside them)", tr, topLevel)
		}
	}
	importedFrom := map[string][]string{} // pkg -> other trees' packages that import it
	var pkgs []string
	for pkg, imps := range imports {
		pkgs = append(pkgs, pkg)
		for ip, u := range imps {
			if tree(ip) != tree(pkg) {
				importedFrom[ip] = append(importedFrom[ip], pkg)
			}
			if u.test || tree(ip) == tree(pkg) {
				continue
			}
			if layers[tree(ip)] >= layers[tree(pkg)] {
				t.Errorf("%s imports %s: %s is not below %s (docs/design.md, Layout)", u.file, ip, tree(ip), tree(pkg))
			}
		}
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		if tree(pkg) == "cmd" || commands[pkg] || !strings.Contains(pkg, "/") || slices.Contains(strings.Split(pkg, "/"), "internal") {
			continue
		}
		if len(importedFrom[pkg]) == 0 {
			t.Errorf("%s is importable but only its own tree uses it: move it under %s/internal/", pkg, tree(pkg))
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
}

func modulePath(t *testing.T, root string) string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return path.Clean(strings.TrimSpace(m))
		}
	}
	t.Fatal("no module line in go.mod")
	return ""
}
