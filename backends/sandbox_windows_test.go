package backends_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestSandboxJobProcesses: a sandboxed server's processes limit reaches
// its Job Object. The server is started through a .cmd wrapper, as npx
// is (cmd.exe, its console host, then the testbackend): with processes 4
// it starts and status says the limit is enforced; with processes 1 cmd.exe
// cannot start the testbackend, and the server fails to start.
func TestSandboxJobProcesses(t *testing.T) {
	if testutil.Wine {
		t.Skip("Wine does not enforce Job Object active-process limits; run on Windows (CI's windows-latest)")
	}
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "server.cmd")
	if err := os.WriteFile(wrapper, []byte("@\""+testbackend+"\" %*\r\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	server := func(name string, processes int) config.Server {
		s := srv(name)
		s.Command = wrapper
		s.Sandbox = config.Sandbox{Mode: config.SandboxBestEffort, Network: config.Network{Policy: "all"}, Processes: processes}
		return s
	}
	e := start(t, []config.Server{server("roomy", 4), server("cramped", 1)}, func(o *backends.Options) {
		o.SandboxDir = filepath.Join(dir, "state")
	})
	st := e.waitState(t, "roomy", backends.Ready)
	if st.Sandbox == nil || !st.Sandbox.ProcessesEnforced || st.Sandbox.Summary() != "fs ✗ net all mem — procs 4" {
		t.Errorf("roomy's sandbox: %+v", st.Sandbox)
	}
	// restart: never: its one failed start leaves it Failed.
	if st := e.waitState(t, "cramped", backends.Failed); st.Sandbox == nil || !st.Sandbox.ProcessesEnforced {
		t.Errorf("cramped's sandbox: %+v", st.Sandbox)
	}
}
