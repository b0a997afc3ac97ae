//go:build linux

package backends_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// listenUnix listens on a UNIX socket at path, accepting (and closing)
// every connection until the test ends.
func listenUnix(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { l.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// sessionBus starts a real dbus-daemon session bus, as dbus-run-session
// does, and returns its address (unix:path=/tmp/dbus-…).
func sessionBus(t *testing.T) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		if testing.Short() && os.Getenv("CI") != "true" {
			t.Skip("no dbus-daemon (scripts/os-packages installs it)")
		}
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n') // written once it listens
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(addr)
}

// TestSandboxHidesSessionSockets: a confined server cannot connect to the
// session's UNIX sockets — one in its XDG_RUNTIME_DIR, one in /tmp, a
// real session D-Bus — which Landlock (before ABI 9) does not govern:
// its mount namespace hides them, as root and in the user namespace of
// network none. A socket granted by a read path stays reachable.
func TestSandboxHidesSessionSockets(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	runtime := t.TempDir()
	inRuntime := filepath.Join(runtime, "bus")
	listenUnix(t, inRuntime)
	tmpDir, err := os.MkdirTemp("/tmp", "ssh-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmpDir) })
	inTmp := filepath.Join(tmpDir, "agent.1")
	listenUnix(t, inTmp)
	granted := filepath.Join(runtime, "granted.sock") // bound back into the hidden directory
	listenUnix(t, granted)
	bus := sessionBus(t)
	busPath, ok := strings.CutPrefix(strings.Split(bus, ",")[0], "unix:path=")
	if !ok {
		t.Fatalf("dbus-daemon's address %q has no path", bus)
	}

	var servers []config.Server
	for _, net := range []string{"all", "none"} {
		s := hostile(net, config.Sandbox{Mode: config.SandboxEnforce, Read: []string{granted}, Network: config.Network{Policy: net}})
		s.Env = map[string]string{"DBUS_SESSION_BUS_ADDRESS": bus, "SSH_AUTH_SOCK": inTmp}
		servers = append(servers, s)
	}
	e := start(t, servers, func(o *backends.Options) {
		h.options(o)
		o.Environ = append(o.Environ, "XDG_RUNTIME_DIR="+runtime)
	})
	for _, s := range servers {
		st := e.waitState(t, s.Name, backends.Ready)
		for _, g := range st.Sandbox.Gaps {
			if strings.HasPrefix(g, "UNIX sockets by path:") {
				t.Errorf("%s: the sockets are not hidden: %s", s.Name, g)
			}
		}
		for what, path := range map[string]string{"XDG_RUNTIME_DIR's socket": inRuntime, "/tmp's ssh-agent socket": inTmp, "the session D-Bus": busPath} {
			if text, failed := e.tool(t, s.Name, "connect", map[string]string{"addr": path, "network": "unix"}); !failed {
				t.Errorf("network %s: connecting to %s %s: %q, want it hidden", s.Name, what, path, text)
			}
		}
		if text, failed := e.tool(t, s.Name, "connect", map[string]string{"addr": granted, "network": "unix"}); failed {
			t.Errorf("network %s: connecting to a granted socket: %q", s.Name, text)
		}
	}
}

// TestSandboxScopesAbstractSockets: under network all (no network
// namespace to close them), a confined server cannot connect to an
// abstract UNIX socket outside its sandbox — an X11 server's
// @/tmp/.X11-unix/X0, a dbus-launch bus — since the ruleset asks for
// Landlock's IPC scoping (ABI 6).
func TestSandboxScopesAbstractSockets(t *testing.T) {
	t.Parallel()
	h := newSandboxHome(t)
	if abi := backends.LandlockABI(); abi < 6 {
		t.Skipf("the kernel's Landlock is ABI %d: abstract UNIX sockets are scoped from ABI 6 (status lists the gap)", abi)
	}
	name := "@" + t.TempDir() // unique on the machine
	listenUnix(t, name)
	e := start(t, []config.Server{hostile("h", config.Sandbox{Mode: config.SandboxEnforce})}, h.options)
	e.waitState(t, "h", backends.Ready)
	text, failed := e.tool(t, "h", "connect", map[string]string{"addr": name, "network": "unix"})
	if !failed || !strings.Contains(text, "operation not permitted") {
		t.Errorf("connecting to an abstract socket: %q (error %v), want EPERM from Landlock's scoping", text, failed)
	}
}
