package main

import (
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// packageRunner tells the servers a package runner runs, and their package,
// as the progress names them ("npx is fetching @scope/pkg").
func TestPackageRunner(t *testing.T) {
	cases := []struct {
		command     string
		args        []string
		runner, pkg string
		isRunner    bool
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-everything@2025.11.25", "stdio"}, "npx", "@modelcontextprotocol/server-everything@2025.11.25", true},
		{`C:\Program Files\nodejs\npx.cmd`, []string{"--yes", "pkg"}, "npx", "pkg", true},
		{"/usr/bin/npx", []string{"-p", "@scope/a", "a-bin"}, "npx", "@scope/a", true},
		{"npx", []string{"--package=@scope/b", "b-bin"}, "npx", "@scope/b", true},
		{"uvx", []string{"--from", "mcp-server-git==1.0", "mcp-server-git"}, "uvx", "mcp-server-git==1.0", true},
		{"uvx", []string{"mcp-server-time"}, "uvx", "mcp-server-time", true},
		{"pnpm", []string{"dlx", "pkg"}, "pnpm dlx", "pkg", true},
		{"bunx", []string{"-y"}, "bunx", "", true},
		{"pnpm", []string{"exec", "pkg"}, "", "", false},
		{"node", []string{"server.js"}, "", "", false},
		{"", nil, "", "", false},
	}
	for _, c := range cases {
		runner, pkg, ok := packageRunner(config.Server{Command: c.command, Args: c.args})
		if runner != c.runner || pkg != c.pkg || ok != c.isRunner {
			t.Errorf("%s %v: %q %q %v, want %q %q %v", c.command, c.args, runner, pkg, ok, c.runner, c.pkg, c.isRunner)
		}
	}
}
