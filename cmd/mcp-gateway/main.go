// Command mcp-gateway is one MCP server entry that replaces many: it serves
// MCP on stdio, hosts the answer tools, and starts, supervises and forwards
// to the backend MCP servers of its configuration.
//
// Usage:
//
//	mcp-gateway --stdio [--config PATH] [--debug [PATH]]
//	mcp-gateway --transport http [--listen ADDR] [--config PATH]
//	mcp-gateway --show-config [--config PATH]
//	mcp-gateway tools [--config PATH] [--json]
//	mcp-gateway call NAME [JSON_ARGS] [--config PATH]
//	mcp-gateway status [--config PATH] [--json]
//	mcp-gateway import --from CLIENT|PATH [--write PATH [--force] [--replace-client]] [--no-sandbox]
//	mcp-gateway secret set|get|rm NAME | secret ls
//	mcp-gateway --help | --version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/mcp-gateway/mcp-gateway/backends"
)

// Exit codes (README, Commands).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2 // bad usage or invalid configuration
)

// reaperArg is the hidden argument that turns the process into the backend
// reaper (see backends.RunReaper).
const reaperArg = "__reaper"

func main() {
	if len(os.Args) == 3 && os.Args[1] == backends.SandboxArg {
		// Confine this process and execute the server (docs/sandbox.md);
		// it returns only on failure, which the gateway shows as the
		// server's stderr.
		fmt.Fprintf(os.Stderr, "mcp-gateway: %v\n", backends.RunSandbox(os.Args[2]))
		os.Exit(126)
	}
	if len(os.Args) == 2 && os.Args[1] == reaperArg {
		if err := backends.RunReaper(os.Stdin); err != nil {
			os.Exit(exitFailure)
		}
		os.Exit(exitOK)
	}
	ignoreSIGPIPE()
	holdSIGHUP()
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	code := run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv, subreaper: true})
	stop()
	os.Exit(code)
}

// env is the process's outside world, passed in so that tests can run the
// command in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
	// subreaper: the process is the command itself (not a test running it
	// in-process), so it may adopt and end its backends' orphans
	// (backends.Options.Subreaper).
	subreaper bool
	// tty prompts the user (add); nil: stdin's terminal, if it is one.
	tty prompter
	// secrets is where add stores secret inputs; nil: the user's store.
	secrets secretStore
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, e env) int {
	if registryCommand(args) {
		return runRegistry(ctx, args, e)
	}
	inv, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcp-gateway: %v\nRun 'mcp-gateway --help' for usage.\n", err)
		return exitUsage
	}
	switch {
	case inv.help:
		io.WriteString(e.stdout, usage)
		return exitOK
	case inv.version:
		v := version()
		fmt.Fprintf(e.stdout, "mcp-gateway %s (%s %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		if v == unknownVersion {
			fmt.Fprintln(e.stderr, "mcp-gateway: built without version or VCS information (-buildvcs=false, or outside a git checkout); scripts/build links the version in")
		}
		return exitOK
	case inv.command == "import":
		return runImport(inv, e)
	case inv.command == "secret":
		return runSecret(ctx, inv, e)
	}
	app, err := newApp(inv, e)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcp-gateway: %v\n", err)
		return exitUsage
	}
	defer app.close()
	if err := app.run(ctx); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(e.stderr, "mcp-gateway: %v\n", err)
			return exitUsage
		}
		var ce *reportedError
		if errors.As(err, &ce) {
			return exitFailure // already printed
		}
		app.log.Error("mcp-gateway failed", "err", err)
		return exitFailure
	}
	return exitOK
}
