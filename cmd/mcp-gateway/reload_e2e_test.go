package main

// End-to-end tests of live configuration (docs/configuration.md#live-reload).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/internal/testutil"
)

// reloadConfig is a config of testbackend servers, each counting its
// starts in pidDir/<name> (testbackend -pid-dir).
func reloadConfig(t *testing.T, pidDir string, extra string, servers ...beServer) []byte {
	t.Helper()
	for i := range servers {
		dir := filepath.Join(pidDir, servers[i].Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		servers[i].Args = append(servers[i].Args, "-pid-dir", dir)
	}
	gw := map[string]any{"startup_timeout_ms": 25000, "answer_tools": false}
	if extra != "" {
		gw["separator"] = extra
	}
	b, err := json.MarshalIndent(map[string]any{"gateway": gw, "servers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// saveAsEditors writes data to path as many editors save: a temporary file
// renamed over the original.
func saveAsEditors(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestLiveReload: editing the YAML under a running session swaps backends:
// an added server starts, a removed one stops, a changed one restarts, an
// untouched one keeps its process, and the client gets list_changed. An
// invalid edit is logged with file, line and key and changes nothing; a
// setting that cannot change live says so.
func TestLiveReload(t *testing.T) {
	t.Parallel()
	pids := t.TempDir()
	cfg := testutil.TempFile(t, "config.yaml", "")
	if err := os.WriteFile(cfg, reloadConfig(t, pids, "", tb("keep"), tb("gone"), tb("change")), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startRaw(t, cfg, "e2e")
	wantTools(t, s.toolsList(), "keep.echo", "gone.echo", "change.echo")

	mark := s.Mark()
	saveAsEditors(t, cfg, reloadConfig(t, pids, "", tb("keep"), tb("change", "-extra-tools", "1"), tb("new")))
	s.WaitNote(mark, "notifications/tools/list_changed", testutil.DefaultTimeout)
	var names []string
	testutil.WaitFor(t, testutil.DefaultTimeout, "new.echo and change.extra_000 listed", func() bool {
		names = s.toolsList()
		return slices.Contains(names, "new.echo") && slices.Contains(names, "change.extra_000")
	})
	wantNoTools(t, names, "gone.echo")
	if sc := s.structured("new.echo", `{"n":1}`); sc["n"] == nil {
		t.Errorf("new.echo = %v", sc)
	}
	if code, _, _ := s.callTool("gone.echo", `{}`).Error(t); code != -32602 {
		t.Errorf("gone.echo after removal: code %d", code)
	}
	if n := starts(t, filepath.Join(pids, "keep")); n != 1 {
		t.Errorf("keep started %d times: an untouched server was disturbed", n)
	}
	if n := starts(t, filepath.Join(pids, "change")); n != 2 {
		t.Errorf("change started %d times, want 2", n)
	}

	// An invalid edit: logged with file, line and key; nothing changes.
	bad := strings.Replace(string(reloadConfig(t, pids, "", tb("keep"))), `"name": "keep"`, `"name": "keep", "restart": "sometimes"`, 1)
	saveAsEditors(t, cfg, []byte(bad))
	waitStderr(t, s, "configuration not reloaded")
	// The log quotes the message (Windows paths' backslashes doubled).
	quoted := strconv.Quote(cfg)
	if !strings.Contains(s.Stderr.String(), quoted[1:len(quoted)-1]+":") || !strings.Contains(s.Stderr.String(), "servers[0].restart") {
		t.Errorf("the error does not name file, line and key:\n%s", s.Stderr)
	}
	if sc := s.structured("new.echo", `{"n":2}`); sc["n"] == nil {
		t.Errorf("new.echo after an invalid edit = %v", sc)
	}

	// A setting that cannot change live says so; the servers still apply.
	saveAsEditors(t, cfg, reloadConfig(t, pids, "_", tb("keep"), tb("change", "-extra-tools", "1"), tb("new")))
	waitStderr(t, s, "key=gateway.separator")
	if n := starts(t, filepath.Join(pids, "keep")); n != 1 {
		t.Errorf("keep started %d times", n)
	}
}

// waitStderr waits until the gateway's stderr holds text.
func waitStderr(t *testing.T, s *proc, text string) {
	t.Helper()
	testutil.WaitFor(t, testutil.DefaultTimeout, text+" in stderr", func() bool { return strings.Contains(s.Stderr.String(), text) })
}
