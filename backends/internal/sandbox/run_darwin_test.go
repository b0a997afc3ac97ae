package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestMain lets this test binary play the two processes of a confined
// start on macOS: with SANDBOX_TEST_RUN=1 it is the gateway's sandbox
// mode (Run, with the plan as its last argument), which executes it again
// under sandbox-exec as the server; with SANDBOX_TEST_DO it is that
// server, and does each "read PATH", "write PATH" or "connect ADDR" of
// the |-separated list, printing "ACTION: ok" or "ACTION: ERROR".
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("SANDBOX_TEST_RUN") == "1":
		os.Setenv("SANDBOX_TEST_RUN", "")
		fmt.Println(Run(os.Args[len(os.Args)-1]))
		os.Exit(126)
	case os.Getenv("SANDBOX_TEST_DO") != "":
		for _, action := range strings.Split(os.Getenv("SANDBOX_TEST_DO"), "|") {
			verb, arg, _ := strings.Cut(action, " ")
			var err error
			switch verb {
			case "read":
				_, err = os.ReadFile(arg)
			case "write":
				err = os.WriteFile(arg, []byte("x"), 0o600)
			case "connect":
				var c net.Conn
				if c, err = net.Dial("tcp", arg); err == nil {
					c.Close()
				}
			}
			if err == nil {
				fmt.Printf("%s: ok\n", action)
			} else {
				fmt.Printf("%s: %v\n", action, err)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProfileOnMacOS runs a real child under the profile Prepare and Run
// make, through sandbox-exec, so that macOS itself compiles the profile
// and enforces it: the server reads its read path and the system, writes
// its state directory, and may neither read a file outside them (nor the
// gateway's), nor write its read path; under network none a TCP connect to
// a listening loopback port fails, under a list only the egress proxy's
// port can be reached.
func TestProfileOnMacOS(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // /var/folders/…: a symbolic link away from /private/var
	mk := func(p string) string {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	allowed, other, gateway := mk("notes/a.txt"), mk("other/id_rsa"), mk(`gw "conf"/config.yaml`)
	state := filepath.Join(dir, "state", "s")
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	elsewhere, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close()

	run := func(t *testing.T, network config.Network, actions ...string) map[string]string {
		t.Helper()
		h := Host{Helper: []string{exe}, Home: filepath.Join(dir, "home"), StateDir: state,
			Protected: []string{filepath.Dir(gateway)}, Proxy: proxy.Addr().String()}
		sb := config.Sandbox{Mode: config.SandboxEnforce, Read: []string{filepath.Dir(allowed)}, Network: network}
		argv, env, a, err := Prepare(sb, Spec{Command: exe, Env: os.Environ()}, h)
		if err != nil || !a.FS || !a.NetworkEnforced || a.NetNS {
			t.Fatalf("prepare: %v %+v", err, a)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(env, "SANDBOX_TEST_RUN=1", "SANDBOX_TEST_DO="+strings.Join(actions, "|"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			action, result, _ := strings.Cut(line, ": ")
			got[action] = result
		}
		return got
	}
	t.Run("files and network none", func(t *testing.T) {
		ok := []string{"read " + allowed, "read /etc/hosts", "write " + filepath.Join(state, "tmp", "x")}
		denied := []string{"read " + other, "read " + gateway, "write " + filepath.Join(filepath.Dir(allowed), "new"),
			"write " + filepath.Join(dir, "new"), "connect " + elsewhere.Addr().String()}
		got := run(t, config.Network{Policy: "none"}, append(ok, denied...)...)
		for _, a := range ok {
			if got[a] != "ok" {
				t.Errorf("%s: %q, want ok", a, got[a])
			}
		}
		for _, a := range denied {
			if got[a] == "ok" || got[a] == "" {
				t.Errorf("%s: %q, want it refused", a, got[a])
			}
		}
	})
	t.Run("network list", func(t *testing.T) {
		p, e := "connect "+proxy.Addr().String(), "connect "+elsewhere.Addr().String()
		got := run(t, config.Network{Policy: "list", Allow: []string{"example.org:443"}}, p, e)
		if got[p] != "ok" || got[e] == "ok" || got[e] == "" {
			t.Errorf("the proxy's port: %q (want ok); another: %q (want refused)", got[p], got[e])
		}
	})
}

// TestPrepareLimitsOnMacOS: macOS confines files and the network but has
// no limit for a process tree: memory_mb and processes are said not to be
// enforced (best_effort), and enforce refuses a server that sets them.
func TestPrepareLimitsOnMacOS(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := Host{Helper: []string{exe}, StateDir: filepath.Join(t.TempDir(), "s")}
	sb := config.Sandbox{Mode: config.SandboxBestEffort, Network: config.Network{Policy: "none"}, MemoryMB: 512, Processes: 64}
	_, _, a, err := Prepare(sb, Spec{Command: exe}, h)
	if err != nil || a.Summary() != "fs ✓ net none mem — procs —" || len(a.NotEnforced) != 2 ||
		!strings.HasPrefix(a.NotEnforced[0], "memory_mb 512: not enforced on macOS") || !strings.HasPrefix(a.NotEnforced[1], "processes 64: not enforced on macOS") {
		t.Errorf("best_effort: %v %q %q", err, a.Summary(), a.NotEnforced)
	}
	sb.Mode = config.SandboxEnforce
	if _, _, _, err := Prepare(sb, Spec{Command: exe}, h); !Unstartable(err) {
		t.Errorf("enforce: %v, want a refusal", err)
	}
}
