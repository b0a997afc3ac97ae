//go:build unix

package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// Every way a client can leave stops the backends gracefully: a stateful
// backend (testbackend -exit-file) sees its stdin end (or SIGTERM) and has
// the chance to save, instead of the SIGKILL a dead gateway's Pdeathsig
// gives it. The ways: SIGHUP (a reload, never a kill; the gateway goes on),
// a closed stdout (EPIPE on the next write: SIGPIPE must not kill the
// gateway), and the client exiting in the middle of a call (stdin and
// stdout both gone while a call waits on a backend).
func TestGracefulStopOnEveryClientExit(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"sighup", "stdout-closed", "client-exits-mid-call"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			exitFile := filepath.Join(t.TempDir(), "exit")
			cfg := beConfig(t, tb("state", "-exit-file", exitFile))
			p := startGateway(t, baseEnv(t), "--stdio", "--config", cfg)
			s, _ := initSession(t, p, "e2e", "{}")
			s.toolsList()

			switch how {
			case "sighup":
				// A reload, never a kill: the backend keeps running and
				// answering, then stdin EOF stops everything gracefully.
				p.Cmd.Process.Signal(syscall.SIGHUP)
				testutil.WaitFor(t, testutil.DefaultTimeout, "the reload", func() bool {
					return strings.Contains(p.Stderr.String(), "configuration reloaded")
				})
				s.structured("state.echo", `{}`)
				if b, _ := os.ReadFile(exitFile); len(b) > 0 {
					t.Errorf("SIGHUP stopped the backend (%q)", b)
				}
				p.Stdin.Close()
			case "stdout-closed":
				p.CloseOutput()
				io.WriteString(p.Stdin, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
			case "client-exits-mid-call":
				s.Request("tools/call", `{"name":"state.hang","arguments":{}}`)
				testutil.WaitFor(t, testutil.DefaultTimeout, "the call at the backend", func() bool {
					n, _ := s.structured("state.stats", `{}`)["active"].(json.Number).Int64()
					return n > 0
				})
				p.CloseOutput()
				p.Stdin.Close()
			}
			select {
			case <-p.Done():
				if ws, ok := p.Cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					t.Errorf("gateway killed by %v\nstderr:\n%s", ws.Signal(), p.Stderr)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("gateway still running 15 s later\nstderr:\n%s", p.Stderr)
			}
			testutil.WaitFor(t, 5*time.Second, "the backend's exit file", func() bool {
				b, _ := os.ReadFile(exitFile)
				return len(b) > 0
			})
			if b, _ := os.ReadFile(exitFile); string(b) != "eof" && string(b) != "term" {
				t.Errorf("backend stopped by %q, want eof or term", b)
			}
		})
	}
}
