//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
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
			cmd := exec.Command(gatewayBin, "--stdio", "--config", cfg)
			cmd.Env = baseEnv(t)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = outW
			stderr := &testutil.Buffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			outW.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				outR.Close()
				<-done
			})
			out := bufio.NewReader(outR)
			send := func(s string) { stdin.Write([]byte(s + "\n")) }
			readID := func(id string) {
				t.Helper()
				for {
					line, err := out.ReadString('\n')
					if err != nil {
						t.Fatalf("read: %v\nstderr:\n%s", err, stderr)
					}
					if strings.Contains(line, `"id":`+id+`,`) || strings.Contains(line, `"id":`+id+`}`) {
						return
					}
				}
			}
			send(initMsg)
			readID("1")
			send(initializedMsg)
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			readID("2")

			switch how {
			case "sighup":
				// A reload, never a kill: the backend keeps running and
				// answering, then stdin EOF stops everything gracefully.
				cmd.Process.Signal(syscall.SIGHUP)
				time.Sleep(300 * time.Millisecond)
				send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"state.echo","arguments":{}}}`)
				readID("3")
				if b, _ := os.ReadFile(exitFile); len(b) > 0 {
					t.Errorf("SIGHUP stopped the backend (%q)", b)
				}
				stdin.Close()
			case "stdout-closed":
				outR.Close()
				send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
			case "client-exits-mid-call":
				send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"state.hang","arguments":{}}}`)
				time.Sleep(100 * time.Millisecond) // the call reaches the backend
				outR.Close()
				stdin.Close()
			}
			select {
			case err := <-done:
				done <- err
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					t.Errorf("gateway killed by %v\nstderr:\n%s", ws.Signal(), stderr)
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("gateway still running 15 s later\nstderr:\n%s", stderr)
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
