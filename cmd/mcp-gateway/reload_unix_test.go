//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestSIGHUPReloads: SIGHUP reloads the configuration (and does not end
// the gateway); an untouched server is not restarted.
func TestSIGHUPReloads(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	wantTools(t, s.toolsList(), "tb.echo")
	s.Cmd.Process.Signal(syscall.SIGHUP)
	waitStderr(t, s, "trigger=SIGHUP")
	if sc := s.structured("tb.echo", `{"n":1}`); sc["n"] == nil {
		t.Errorf("tb.echo after SIGHUP = %v", sc)
	}
	for _, want := range []string{"configuration reloaded", "added=[]", "removed=[]", "restarted=[]"} {
		if got := s.Stderr.String(); !strings.Contains(got, want) {
			t.Errorf("no %q in the reload log:\n%s", want, got)
		}
	}
}

// TestReloadRetriedAfterShortage: a reload whose read of the file failed
// because the gateway had no file descriptor left is tried again, and
// applies once descriptors are back. It runs in a child process of the
// test binary, whose descriptors it exhausts (below a lowered limit).
func TestReloadRetriedAfterShortage(t *testing.T) {
	t.Parallel()
	if !testutil.InChild(t, "RELOAD_SHORTAGE_CHILD") {
		return
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("servers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, src, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	s := newSettler(path, src.File)
	var applied []string
	apply := func(trigger string, data []byte) { applied = append(applied, trigger+": "+string(data)) }
	var logs testutil.LogRecorder
	log := logs.Logger()

	release := testutil.ExhaustFiles(t)
	s.want("file changed")
	first := s.step(log, apply)
	second := s.step(log, apply)
	release()
	if first != shortageRetry || second != 2*shortageRetry || len(applied) != 0 {
		t.Errorf("out of descriptors: next steps in %v and %v (want %v, %v), applied %q", first, second, shortageRetry, 2*shortageRetry, applied)
	}
	if len(logs.Find("short of a system resource", "too many open files")) != 2 {
		t.Errorf("log:\n%s", strings.Join(logs.Lines(), "\n"))
	}
	for range 3 {
		if s.step(log, apply) == 0 {
			break
		}
	}
	if len(applied) != 1 || applied[0] != "file changed: servers: []\n" {
		t.Errorf("after the descriptors came back: applied %q", applied)
	}
}
