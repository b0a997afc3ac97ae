//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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
