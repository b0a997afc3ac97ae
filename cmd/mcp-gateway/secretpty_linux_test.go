package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"golang.org/x/sys/unix"
)

// TestSecretSetFromTerminal: at a terminal, `secret set` asks for the
// value and reads it with echo off: nothing typed comes back on the
// terminal, and the value is kept. (A pseudo-terminal is its stdin.)
func TestSecretSetFromTerminal(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t)
	env := baseEnv(t, "MCP_GATEWAY_SECRETS=file")
	cmd := exec.Command(gatewayBin, "secret", "set", "tty.TOKEN")
	cmd.Env = env
	var stderr testutil.Buffer
	cmd.Stdin, cmd.Stderr = slave, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child's now: its exit ends the master's reads
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Typed once the prompt shows, which comes after echo is off.
	testutil.WaitFor(t, testutil.DefaultTimeout, "the prompt, and echo turned off", func() bool {
		tio, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
		return err == nil && tio.Lflag&unix.ECHO == 0 && strings.Contains(stderr.String(), "Value of secret tty.TOKEN (not shown): ")
	})
	const value = "typed-at-the-tty-3f9"
	if _, err := io.WriteString(master, value+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("secret set: %v\n%s", err, stderr.String())
	}
	echoed, err := io.ReadAll(master)
	if err != nil && !errors.Is(err, syscall.EIO) { // EIO: the terminal's other end is closed
		t.Fatal(err)
	}
	if bytes.Contains(echoed, []byte(value)) {
		t.Errorf("the terminal echoed the value: %q", echoed)
	}
	if out, _, code := secretCLI(t, env, "", "get", "tty.TOKEN"); code != 0 || out != value+"\n" {
		t.Errorf("secret get: exit %d %q", code, out)
	}
}
