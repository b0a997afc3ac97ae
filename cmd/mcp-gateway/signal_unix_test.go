//go:build unix

package main

import (
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

func TestStdioExitsOnSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
		p.send(initMsg + "\n")
		p.readLine()
		p.Cmd.Process.Signal(sig)
		select {
		case <-p.Done():
			if err := p.Err(); err != nil {
				t.Errorf("%v: exit status %v, want 0", sig, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: gateway still running after 5s", sig)
		}
	}
}
