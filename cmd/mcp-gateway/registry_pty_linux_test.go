package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"golang.org/x/sys/unix"
)

// ptyAdd runs the binary's add on a real terminal: stdin the pty's
// slave, stderr collected; what the terminal echoes is read from the
// master.
type ptyAdd struct {
	cmd          *exec.Cmd
	master       *os.File
	slave        *os.File
	stderr, echo *testutil.Buffer
	echoDone     chan struct{}
}

func startPTYAdd(t *testing.T, args ...string) *ptyAdd {
	t.Helper()
	m, s := openPTY(t)
	p := &ptyAdd{master: m, slave: s, stderr: &testutil.Buffer{}, echo: &testutil.Buffer{}, echoDone: make(chan struct{})}
	p.cmd = exec.Command(gatewayBin, args...)
	p.cmd.Env = baseEnv(t)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = s, io.Discard, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.echoDone)
		io.Copy(p.echo, m) // ends when the slave's last holder closes it (EIO)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		s.Close()
		<-p.echoDone
		m.Close()
	})
	return p
}

func (p *ptyAdd) waitStderr(t *testing.T, s string) {
	t.Helper()
	testutil.WaitFor(t, testutil.DefaultTimeout, fmt.Sprintf("%q on stderr", s), func() bool { return strings.Contains(p.stderr.String(), s) })
}

func (p *ptyAdd) typeLine(t *testing.T, s string) {
	t.Helper()
	if _, err := p.master.WriteString(s + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestAddTerminal drives add's prompts through a real terminal: a secret
// is read without echo while an ordinary answer is echoed; Ctrl-C at the
// secret's prompt ends add with nothing written and the terminal's echo
// back on.
func TestAddTerminal(t *testing.T) {
	reg := fixtureRegistry(t)
	dir := t.TempDir()
	cfg := writeStart(t, dir, reg.URL)
	before := string(must(os.ReadFile(cfg)))

	p := startPTYAdd(t, "add", "io.github.brave/brave-search-mcp-server", "--config", cfg)
	p.waitStderr(t, "environment variable BRAVE_API_KEY (Your Brave Search API key) (hidden): ")
	p.typeLine(t, "BSA-typed-on-a-terminal")
	p.waitStderr(t, "Add it? [y/N] ")
	p.typeLine(t, "nope")
	if err := p.cmd.Wait(); err == nil {
		t.Fatalf("add declined exited 0:\n%s", p.stderr)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "the answer echoed", func() bool { return strings.Contains(p.echo.String(), "nope") })
	if strings.Contains(p.echo.String(), "BSA-typed") || strings.Contains(p.stderr.String(), "BSA-typed") {
		t.Errorf("the secret was echoed:\n%q\n%q", p.echo.String(), p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "nothing written") || string(must(os.ReadFile(cfg))) != before {
		t.Fatalf("declined add wrote:\n%s\n%s", p.stderr, must(os.ReadFile(cfg)))
	}

	q := startPTYAdd(t, "add", "io.github.brave/brave-search-mcp-server", "--config", cfg)
	q.waitStderr(t, "(hidden): ")
	if err := q.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := q.cmd.Wait()
	if code := q.cmd.ProcessState.ExitCode(); err == nil || code != exitFailure {
		t.Fatalf("add interrupted at a secret's prompt: %v (exit %d)\n%s", err, code, q.stderr)
	}
	if !strings.Contains(q.stderr.String(), "interrupted; nothing written") {
		t.Errorf("stderr after Ctrl-C:\n%s", q.stderr)
	}
	if got := string(must(os.ReadFile(cfg))); got != before {
		t.Errorf("the configuration changed:\n%s", got)
	}
	if ents := must(os.ReadDir(filepath.Dir(cfg))); len(ents) != 1 {
		t.Errorf("files left beside the configuration: %v", ents)
	}
	tio, err := unix.IoctlGetTermios(int(q.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 {
		t.Error("the terminal's echo is left off after Ctrl-C at a secret's prompt")
	}
}
