package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/secrets"
)

// secretOptions locate the user's secret store (docs/secrets.md): its
// files in the configuration directory, the file backend's key in the
// state directory, the backend MCP_GATEWAY_SECRETS names (auto when unset).
func secretOptions(home string, lookup func(string) (string, bool)) secrets.Options {
	backend, _ := lookup(secrets.EnvVar)
	return secrets.Options{
		Backend: strings.TrimSpace(backend),
		Dir:     config.SecretsDir(home),
		KeyFile: config.SecretsKeyFile(home, runtime.GOOS, lookup),
	}
}

// openSecretStore opens the user's secret store, as `secret` and `add`
// write it and the gateway reads it: store.Set(NAME, value) keeps a
// secret, and config.SecretRef(NAME) is what the YAML refers to it by.
func openSecretStore(e env) (*secrets.Store, error) {
	home, _ := os.UserHomeDir()
	return secrets.Open(secretOptions(home, e.lookup))
}

// runSecret is `mcp-gateway secret set|get|ls|rm [NAME]`.
func runSecret(ctx context.Context, inv *invocation, e env) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(e.stderr, "mcp-gateway: secret %s: %v\n", inv.secret, err)
		return code
	}
	store, err := openSecretStore(e)
	if err != nil {
		return fail(exitUsage, err)
	}
	switch inv.secret {
	case "set":
		value, err := readSecret(ctx, e, inv.name)
		if err != nil {
			return fail(exitFailure, err)
		}
		if err := store.Set(inv.name, value); err != nil {
			return fail(exitFailure, err)
		}
		fmt.Fprintf(e.stderr, "mcp-gateway: secret %s set in the %s store; a running gateway restarts the servers that use it\n", inv.name, store.Backend())
	case "get":
		v, err := store.Get(inv.name)
		if err != nil {
			return fail(exitFailure, err)
		}
		fmt.Fprintln(e.stdout, v)
	case "rm":
		if err := store.Delete(inv.name); err != nil {
			return fail(exitFailure, err)
		}
		fmt.Fprintf(e.stderr, "mcp-gateway: secret %s removed from the %s store\n", inv.name, store.Backend())
	case "ls":
		names, err := store.Names()
		if err != nil {
			return fail(exitFailure, err)
		}
		fmt.Fprintf(e.stdout, "# store: %s (%s)\n", store.Backend(), store.Choice())
		for _, n := range names {
			fmt.Fprintln(e.stdout, n)
		}
	}
	return exitOK
}

// readSecret reads a secret's value: typed at the terminal without echo
// when stdin is one, else all of stdin (one trailing newline dropped, as
// `echo VALUE |` adds). Never from the command line, which the shell's
// history and the process list keep.
func readSecret(ctx context.Context, e env, name string) (string, error) {
	if tty := terminalOf(e.stdin, e.stderr); tty != nil {
		// add's prompter: echo off before the prompt shows, back on
		// however the read ends (Ctrl-C included).
		v, err := tty.Secret(ctx, fmt.Sprintf("Value of secret %s (not shown): ", name))
		if err != nil {
			return "", fmt.Errorf("reading the value from the terminal: %w", err)
		}
		return v, nil
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, secrets.MaxValue+2))
	if err != nil {
		return "", fmt.Errorf("reading the value from stdin: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return "", errors.New("no value on stdin: type it at a terminal, or pipe it in (printf %s VALUE | mcp-gateway secret set NAME)")
	}
	return string(b), nil
}
