package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestAddEndToEnd: `mcp-gateway add` of the fixture registry's
// server-everything entry (the npm package the tests install, at its
// locked version, which npx runs from node_modules without a download)
// while a gateway runs on the file: the running gateway picks the entry
// up by its live reload, withholds its tools (trust: approve) until
// `mcp-gateway approve`, then lists them, and a call works.
func TestAddEndToEnd(t *testing.T) {
	npmPeers(t)
	reg := fixtureRegistry(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	start := "# my gateway\ngateway:\n  registry: {url: " + reg.URL + "}\n  answer_tools: false\n"
	if err := os.WriteFile(cfg, []byte(start), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startRaw(t, cfg, "add-e2e")
	if names := s.toolsList(); len(names) != 0 {
		t.Fatalf("tools before add: %v", names)
	}

	out, err := gwCommand(t, "add", "io.github.modelcontextprotocol/everything", "--yes", "--config", cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	for _, want := range []string{"runs: npx -y @modelcontextprotocol/server-everything@2026.8.31", "trust: approve", `added everything to ` + cfg} {
		if !strings.Contains(string(out), want) {
			t.Errorf("add did not say %q:\n%s", want, out)
		}
	}
	data := string(must(os.ReadFile(cfg)))
	if !strings.HasPrefix(data, start) || !strings.Contains(data, "from: registry io.github.modelcontextprotocol/everything@2026.8.31") {
		t.Fatalf("the configuration after add:\n%s", data)
	}

	// The running gateway reloads the file and starts the server; its
	// tools are withheld until approved (trust: approve).
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		code, _, data := s.callTool("everything.echo", `{"message":"x"}`).Error(t)
		return code == -32003 && data["withheld"] != nil
	}) {
		t.Fatal("the running gateway never withheld the added server's echo")
	}
	if names := s.toolsList(); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "everything.") }) {
		t.Fatalf("tools listed before approval: %v", names)
	}
	if out, err := gwCommand(t, "approve", "everything", "--all", "--config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if !testutil.Poll(testutil.DefaultTimeout, func() bool { return slices.Contains(s.toolsList(), "everything.echo") }) {
		t.Fatalf("the running gateway does not list everything.echo after approval: %v", s.toolsList())
	}
	r := s.callTool("everything.echo", `{"message":"added from the registry"}`)
	if !strings.Contains(r.String(), "added from the registry") {
		t.Fatalf("everything.echo: %s", r)
	}
}
