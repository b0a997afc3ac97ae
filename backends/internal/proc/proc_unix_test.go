//go:build unix

package proc_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the reaper (PROC_TEST_REAPER=1) and as a
// gateway that starts one child with the reaper and waits to be killed
// (PROC_TEST_GATEWAY=shell script).
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("PROC_TEST_REAPER") == "1":
		if err := proc.RunReaper(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "reaper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv("PROC_TEST_GATEWAY") != "":
		os.Exit(fakeGateway(os.Getenv("PROC_TEST_GATEWAY")))
	}
	os.Exit(m.Run())
}

// fakeGateway starts script under sh with the reaper, prints "pid N" for
// the child and the child's first output line, and waits to be killed.
func fakeGateway(script string) int {
	self, _ := os.Executable()
	env := append(os.Environ(), "PROC_TEST_GATEWAY=", "PROC_TEST_REAPER=1", "GORACE=atexit_sleep_ms=0")
	r, err := proc.StartReaper([]string{self}, env, nil)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	p, err := proc.Start(proc.Spec{Command: "sh", Args: []string{"-c", script}, Env: os.Environ()})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	r.Add(p)
	line, _ := bufio.NewReader(p.Stdout).ReadString('\n')
	fmt.Printf("pid %d %s", p.Pid, line)
	select {}
}

// startSh runs script under sh through proc.Start; the script's first line
// on stdout is returned (a grandchild's pid, by convention).
func startSh(t *testing.T, script string) (*proc.Process, string) {
	t.Helper()
	p, err := proc.Start(proc.Spec{Command: "sh", Args: []string{"-c", script}, Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		p.CloseFiles()
	})
	return p, firstLine(t, p.Stdout, 5*time.Second)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("not a pid: %q", s)
	}
	return n
}

// firstLine reads the first line of a pipe, failing the test if none comes
// within d.
func firstLine(t *testing.T, r io.Reader, d time.Duration) string {
	t.Helper()
	if f, ok := r.(*os.File); ok {
		f.SetReadDeadline(time.Now().Add(d))
		defer f.SetReadDeadline(time.Time{})
	}
	l, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading a line: %v (got %q)", err, l)
	}
	return strings.TrimSpace(l)
}

func TestStartGroupAndExit(t *testing.T) {
	t.Parallel()
	p, line := startSh(t, `echo $$; read x; exit 3`)
	if pid := atoi(t, line); pid != p.Pid {
		t.Errorf("pid %d, child says %d", p.Pid, pid)
	}
	if pgid, err := syscall.Getpgid(p.Pid); err != nil || pgid != p.Pid {
		t.Errorf("pgid %d (%v), want its own group %d", pgid, err, p.Pid)
	}
	io.WriteString(p.Stdin, "go\n")
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("no exit")
	}
	if got := p.ExitReason(); got != "exit status 3" {
		t.Errorf("exit reason %q", got)
	}
}

// TestStopEndsOnStdinEOF: a child that exits on EOF is not signalled.
func TestStopEndsOnStdinEOF(t *testing.T) {
	t.Parallel()
	p, _ := startSh(t, `echo ready; cat >/dev/null; exit 0`)
	p.Stop(5 * time.Second)
	// Its own exit status, not a signal's: it was not signalled.
	if got := p.ExitReason(); got != "exit status 0" {
		t.Errorf("exit reason %q, want a clean exit on EOF", got)
	}
}

// TestStopKillsGroup: SIGTERM ends a child that ignores EOF, and its
// grandchild with it; one that also ignores SIGTERM is SIGKILLed.
func TestStopKillsGroup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, script, reason string }{
		{"term", `sleep 300 & echo $!; wait`, "signal: terminated"},
		{"stubborn", `trap '' TERM; sleep 300 & echo $!; while :; do sleep 1; done`, "signal: killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, line := startSh(t, tc.script)
			grandchild := atoi(t, line)
			if !testutil.Alive(grandchild) {
				t.Fatal("grandchild not running")
			}
			p.Stop(200 * time.Millisecond)
			if got := p.ExitReason(); got != tc.reason {
				t.Errorf("exit reason %q, want %q", got, tc.reason)
			}
			testutil.WaitDead(t, testutil.DefaultTimeout, p.Pid, grandchild)
		})
	}
}

// TestKillAfterLeaderExit: the child exited and left a grandchild in its
// group; Kill ends it.
func TestKillAfterLeaderExit(t *testing.T) {
	t.Parallel()
	p, line := startSh(t, `sleep 300 >/dev/null 2>&1 & echo $!`)
	grandchild := atoi(t, line)
	<-p.Exited()
	if !testutil.Alive(grandchild) {
		t.Fatal("grandchild not running")
	}
	p.Kill()
	testutil.WaitDead(t, testutil.DefaultTimeout, grandchild)
}

func TestRunReaper(t *testing.T) {
	t.Parallel()
	// A process group of its own (sh and its sleep), registered, then
	// unregistered one: closing the input kills only the registered one.
	start := func() (*exec.Cmd, int) {
		cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; wait")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
		return cmd, atoi(t, firstLine(t, out, 5*time.Second))
	}
	a, agc := start()
	b, bgc := start()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- proc.RunReaper(r) }()
	fmt.Fprintf(w, "add %d\nadd %d\ngarbage\nadd 1\nadd -1\ndel %d\n", a.Process.Pid, b.Process.Pid, b.Process.Pid)
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	testutil.WaitDead(t, testutil.DefaultTimeout, a.Process.Pid, agc) // a zombie until a.Wait counts as dead
	a.Wait()
	if !testutil.Alive(b.Process.Pid) || !testutil.Alive(bgc) {
		t.Error("unregistered group was killed")
	}
}

// TestReaperOnGatewaySIGKILL runs the test binary as a gateway whose child
// has a grandchild, SIGKILLs the gateway, and checks that both die: on
// Linux Pdeathsig alone would leave the grandchild, on macOS both.
func TestReaperOnGatewaySIGKILL(t *testing.T) {
	t.Parallel()
	gw := exec.Command(os.Args[0], "-test.run=^$")
	gw.Env = append(os.Environ(), "PROC_TEST_GATEWAY=sleep 300 & echo $!; wait")
	gw.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := gw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	gw.Stderr = os.Stderr
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		gw.Process.Kill()
		gw.Wait()
	})
	line := firstLine(t, out, 10*time.Second)
	var pid, grandchild int
	if _, err := fmt.Sscanf(line, "pid %d %d", &pid, &grandchild); err != nil {
		t.Fatalf("gateway said %q", line)
	}
	if !testutil.Alive(pid) || !testutil.Alive(grandchild) {
		t.Fatalf("child %d or grandchild %d not running", pid, grandchild)
	}
	gw.Process.Kill()
	gw.Wait()
	testutil.WaitDead(t, testutil.DefaultTimeout, pid, grandchild)
}

// TestPipesStayNonBlocking: Start leaves the child's pipes in the
// netpoller's non-blocking mode (nothing calls Fd on them), so a read of
// a backend's stdout waits without holding a thread; with a blocking
// descriptor every read costs a thread hand-off.
func TestPipesStayNonBlocking(t *testing.T) {
	t.Parallel()
	p, _ := startSh(t, `echo ready; cat >/dev/null`)
	for name, f := range map[string]*os.File{"stdin": p.Stdin, "stdout": p.Stdout, "stderr": p.Stderr} {
		rc, err := f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var flags int
		var ferr error
		if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
			t.Fatalf("%s: fcntl: %v %v", name, err, ferr)
		}
		if flags&unix.O_NONBLOCK == 0 {
			t.Errorf("%s is in blocking mode", name)
		}
	}
}
