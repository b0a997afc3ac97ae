package main

// End-to-end tests of live configuration (docs/configuration.md#live-reload).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
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
	gw := map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false}
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

// TestRESTAfterReload: the REST API sees the servers of the configuration
// in force, as the MCP front does: a server added by a reload is listed
// with its own timeout and called, one that is down reports its state,
// and a removed one is unknown.
func TestRESTAfterReload(t *testing.T) {
	t.Parallel()
	pids := t.TempDir()
	cfg := testutil.TempFile(t, "config.yaml", "")
	if err := os.WriteFile(cfg, reloadConfig(t, pids, "", tb("keep"), tb("gone")), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startHTTP(t, cfg)
	if status, r := restCall(t, g.base, `{"server":"gone","toolName":"echo","input":{}}`); status != 200 {
		t.Fatalf("gone.echo before the reload: %d %+v", status, r)
	}

	added := tb("added")
	added.TimeoutMS = 1234
	down := tb("down", "-fail-start", "3")
	down.Restart = "never"
	saveAsEditors(t, cfg, reloadConfig(t, pids, "", tb("keep"), added, down))
	type restTool struct {
		Name, Server string
		Timeout      int64
	}
	var tools []restTool
	testutil.WaitFor(t, testutil.DefaultTimeout, "added.echo in GET /mcp/tools", func() bool {
		resp := getURL(t, g.base+"/mcp/tools", nil)
		var list struct{ Tools []restTool }
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		tools = list.Tools
		return slices.ContainsFunc(tools, func(tl restTool) bool { return tl.Name == "added.echo" })
	})
	for _, tl := range tools {
		if tl.Server == "gone" {
			t.Errorf("a removed server's tool is listed: %+v", tl)
		}
		if tl.Server == "added" && tl.Timeout != 1234 {
			t.Errorf("%s: timeout %d, want the added server's 1234", tl.Name, tl.Timeout)
		}
	}
	if status, r := restCall(t, g.base, `{"server":"added","toolName":"echo","input":{"n":1}}`); status != 200 || string(r.Result) != `{"n":1}` {
		t.Errorf("added.echo: %d %+v", status, r)
	}
	testutil.WaitFor(t, testutil.DefaultTimeout, "down to fail", func() bool { return strings.Contains(getStatus(t, g), `"failed"`) })
	if status, r := restCall(t, g.base, `{"server":"down","toolName":"echo","input":{}}`); status != 503 || r.Error.Code != "SERVER_NOT_RUNNING" {
		t.Errorf("down.echo: %d %+v, want 503 SERVER_NOT_RUNNING", status, r)
	}
	if status, r := restCall(t, g.base, `{"server":"gone","toolName":"echo","input":{}}`); status != 404 || r.Error.Message != "Tool not found: gone/echo" {
		t.Errorf("gone.echo after the reload: %d %+v, want 404 Tool not found: gone/echo", status, r)
	}
}

// TestReloadWaitsForTheFileToSettle: editors and cp rewrite a file in
// place (truncate, then write). Many such rewrites, some left empty or
// half written for longer than the debounce, while calls run to a server
// the edits do not touch: no call fails, and that server is never
// restarted. An empty file that replaced one with servers is not taken for
// "no servers"; the next write reloads.
func TestReloadWaitsForTheFileToSettle(t *testing.T) {
	t.Parallel()
	pids := t.TempDir()
	cfg := testutil.TempFile(t, "config.yaml", "")
	a := reloadConfig(t, pids, "", tb("keep"), tb("x"))
	b := reloadConfig(t, pids, "", tb("keep"), tb("y"))
	if err := os.WriteFile(cfg, a, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startHTTP(t, cfg)

	var calls, failed atomic.Int64
	var failures testutil.Buffer
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Post(g.base+"/mcp/call", "application/json", strings.NewReader(`{"server":"keep","toolName":"echo","input":{"n":1}}`))
				calls.Add(1)
				if err != nil {
					failed.Add(1)
					fmt.Fprintf(&failures, "%v\n", err)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					fmt.Fprintf(&failures, "%d %s\n", resp.StatusCode, body)
				}
			}
		}()
	}

	// rewrite writes data over cfg in place, as cp does; with hold, the
	// file stays empty (or holds its first half) that long first. The
	// holds are the editor's, not waits: what is checked is that the
	// gateway does nothing with the file meanwhile.
	rewrite := func(data []byte, hold time.Duration, half bool) {
		f, err := os.OpenFile(cfg, os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if half {
			f.Write(data[:len(data)/2])
			data = data[len(data)/2:]
		}
		time.Sleep(hold)
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for i := range 40 {
		data := a
		if i%2 == 1 {
			data = b
		}
		switch {
		case i%8 == 3:
			rewrite(data, 2*reloadDebounce, false)
		case i%8 == 7:
			rewrite(data, 2*reloadDebounce, true)
		default:
			rewrite(data, 0, false)
			time.Sleep(20 * time.Millisecond) // the next edit, as a script's cp loop
		}
	}
	// The last edit (b) applies: y starts.
	testutil.WaitFor(t, testutil.DefaultTimeout, "y.echo after the edits", func() bool {
		status, _ := restCallQuiet(g.base, `{"server":"y","toolName":"echo","input":{}}`)
		return status == http.StatusOK
	})
	close(stop)
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d of %d calls to the untouched server failed:\n%s", n, calls.Load(), failures.String())
	}
	if n := starts(t, filepath.Join(pids, "keep")); n != 1 {
		t.Errorf("keep started %d times: the untouched server was restarted", n)
	}
}

// restCallQuiet is restCall for a poll: a failure is a status of 0.
func restCallQuiet(base, body string) (int, []byte) {
	resp, err := http.Post(base+"/mcp/call", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
