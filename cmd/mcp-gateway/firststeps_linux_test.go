package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// A one-shot call exits quietly: stopping a server whose descendant ends
// after it (npx's node under its sh: testbackend -grandchild) is no
// "killed orphaned descendants" warning, and a list refresh the stop cuts
// short is no warning either.
func TestFirstStepsCallExitsQuietly(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("tb", "-grandchild"), tb("other", "-list-changed-on-init"))
	out, errOut, code := runCLI(t, "call", "tb.echo", `{"m":1}`, "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "WRN") || strings.Contains(l, "ERR") {
			t.Errorf("the call's own shutdown warns: %s\nstderr:\n%s", l, errOut)
		}
	}
}

// On a terminal the progress of status is one line, rewritten in place
// ("\r\033[K" before each version of it, no newline between them), and
// erased before the report; stderr is a pseudo-terminal here.
func TestFirstStepsStatusProgressOneLineOnTerminal(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t)
	never := tb("never", "-start-delay", "1h", "-stderr-text", "loading the model...")
	cfg := startConfig(t, 6000, 600000, never)
	cmd := exec.Command(gatewayBin, "status", "--config", cfg)
	cmd.Env = baseEnv(t)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, slave
	read := make(chan string)
	go func() {
		b, _ := io.ReadAll(master) // until the last writer closes: EIO
		read <- string(b)
	}()
	err := cmd.Run()
	slave.Close()
	out := <-read
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("status: %v, want exit 1\n%q", err, out)
	}
	progress, _, _ := strings.Cut(out, "mcp-gateway: not started within")
	if n := strings.Count(progress, "\r\033[Kmcp-gateway: still starting: never ("); n < 1 {
		t.Errorf("the progress line is not drawn in place (3 s to 6 s, each second):\n%q", out)
	}
	if strings.Contains(progress, "\n") || !strings.HasSuffix(progress, "\r\033[K") {
		t.Errorf("the progress is not one line, erased before the report:\n%q", out)
	}
}
