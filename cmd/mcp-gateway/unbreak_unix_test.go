//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// --config on a named pipe is refused at once with exit 2; before, the
// gateway waited for ever in open(2) for a writer, with SIGTERM caught and
// unanswered.
func TestConfigOnFIFORefused(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "config.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--stdio", "--config", fifo}, {"status", "--config", fifo}, {"--show-config", "--config", fifo}} {
		_, errOut, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, fifo+": is a named pipe (FIFO), not a regular file") {
			t.Errorf("%v: exit %d, %q; want 2 and a clear error", args, code, errOut)
		}
	}
}

// SIGUSR1 makes a serving gateway log its runtime figures, and it goes on
// serving (the signal's default action would kill it and SIGKILL every
// backend).
func TestSIGUSR1LogsRuntimeStats(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(initMsg + "\n")
	p.readLine()
	if err := p.Cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "runtime stats on stderr", func() bool {
		return strings.Contains(p.Stderr.String(), "runtime stats goroutines=")
	})
	p.send(pingMsg + "\n")
	if r := p.readLine(); idOf(r) != "99" || r["result"] == nil {
		t.Fatalf("ping after SIGUSR1: %v", r)
	}
}
