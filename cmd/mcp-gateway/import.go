package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/importer"
)

// runImport is `mcp-gateway import`: a client's MCP servers as gateway
// YAML, on stdout or in --write's file, and with --replace-client the
// client's file rewritten to run this gateway on it (docs/clients.md).
func runImport(inv *invocation, e env) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(e.stderr, "mcp-gateway: import: "+format+"\n", args...)
		return code
	}
	home, _ := os.UserHomeDir()
	dir, err := os.Getwd()
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	res, err := importer.Import(importer.Options{
		From: inv.from,
		Home: home,
		Dir:  dir,
		Env:  e.lookup,
		Self: config.NewSelf(inv.configPath, home, e.lookup),

		NoSandbox: inv.noSandbox,
	})
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(e.stderr, "mcp-gateway: import: not imported: %s.%s: %s\n", s.Entry.Source, s.Entry.Key, s.Why)
	}
	out := res.YAML()
	if inv.write == "" {
		e.stdout.Write(out)
		fmt.Fprintf(e.stderr, "mcp-gateway: import: %d servers from %s\n", len(res.Entries), res.Client.Title)
		return exitOK
	}
	path, err := filepath.Abs(config.ExpandHome(inv.write, home))
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if err := importer.WriteConfig(path, out, inv.force); err != nil {
		if errors.Is(err, importer.ErrExists) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitFailure, "write: %v", err)
	}
	// The file must load; importer drops what would not, so this is a check.
	if _, _, err := config.Load(config.LoadOptions{Path: path, Home: home, Env: e.lookup}); err != nil {
		return fail(exitFailure, "the written file does not load: %v", err)
	}
	fmt.Fprintf(e.stderr, "mcp-gateway: import: wrote %d servers from %s to %s\n", len(res.Entries), res.Client.Title, path)
	if !inv.replaceClient {
		fmt.Fprintf(e.stderr, "Check them with: mcp-gateway tools --config %s\n", path)
		return exitOK
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(exitFailure, "find this executable: %v", err)
	}
	backups, err := importer.ReplaceClient(res, exe, path, time.Now())
	for _, b := range backups {
		fmt.Fprintf(e.stderr, "mcp-gateway: import: backed up to %s\n", b)
	}
	if err != nil {
		var ie *importer.Error
		if errors.As(err, &ie) {
			return fail(exitUsage, "%v", err)
		}
		return fail(exitFailure, "%v", err)
	}
	fmt.Fprintf(e.stderr, "mcp-gateway: import: %s now runs one server, %q: %s --stdio --config %s (restart the client)\n",
		res.Client.Title, importer.GatewayEntry, exe, path)
	return exitOK
}
