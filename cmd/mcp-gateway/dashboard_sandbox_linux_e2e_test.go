//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestDashboardShowsSandboxes: `mcp-gateway dashboard` shows, for each
// confined server, its confinement as applied and what is not enforced,
// as status --json reports them; a server the sandbox did not let start
// with why; and no row for a server whose sandbox is off.
func TestDashboardShowsSandboxes(t *testing.T) {
	t.Parallel()
	env, home := confinable(t)
	cfg := filepath.Join(home, "gateway.yaml")
	// capped's memory_mb is enforced where a per-server cgroup v2 can be
	// made, else listed as not enforced: the page must say which, as
	// status does. greedy's read path is the whole home, which no mode
	// grants.
	text := fmt.Sprintf(`
gateway: {answer_tools: false}
servers:
  - {name: h, command: %[1]q, args: [-hostile], sandbox: {mode: enforce, network: none}}
  - {name: capped, command: %[1]q, sandbox: {mode: best_effort, memory_mb: 512}}
  - {name: greedy, command: %[1]q, sandbox: {mode: best_effort, read: [%[2]q]}}
  - {name: plain, command: %[1]q}
`, backendBin, home)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := runCLIEnv(t, env, "status", "--json", "--config", cfg)
	var doc struct {
		Servers []backends.Status `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Servers) != 4 {
		t.Fatalf("status --json: %v\n%s\nstderr:\n%s", err, out, errOut)
	}
	want := map[string][]string{}
	for _, s := range doc.Servers[:2] {
		if s.Sandbox == nil || s.State != backends.Ready {
			t.Fatalf("status --json: %s is not ready and confined: %+v", s.Name, s)
		}
		want[s.Name] = append([]string{"<code>" + s.Sandbox.Summary() + "</code>"}, s.Sandbox.NotEnforced...)
		want[s.Name] = append(want[s.Name], s.Sandbox.Gaps...)
	}
	want["greedy"] = []string{"not started: ", "sandbox: " + home + " would expose the whole home directory"}

	cmd := exec.Command(gatewayBin, "dashboard", "--listen", "127.0.0.1:0", "--config", cfg)
	cmd.Env = env
	base, stderr := startDashboard(t, cmd)
	// The dashboard starts the servers itself: the page shows them once
	// they have started (or been refused).
	rows := map[string]string{}
	var page string
	if !testutil.Poll(testutil.DefaultTimeout, func() bool {
		resp := getURL(t, base, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = html.UnescapeString(string(b))
		for name := range want {
			_, after, ok := strings.Cut(page, `<tr data-sandbox="`+name+`">`)
			row, _, _ := strings.Cut(after, "</tr>")
			if !ok || !strings.Contains(row, "<code>fs ") && !strings.Contains(row, "not started") {
				return false
			}
			rows[name] = row
		}
		return true
	}) {
		t.Fatalf("the page does not show every confined server started:\n%s\nstderr:\n%s", page, stderr)
	}
	for name, lines := range want {
		for _, w := range lines {
			if !strings.Contains(rows[name], w) {
				t.Errorf("the page's row of %s lacks %q:\n%s", name, w, rows[name])
			}
		}
	}
	if !strings.Contains(rows["h"], "<td>enforce</td>") || !strings.Contains(rows["capped"], "<td>best_effort</td>") {
		t.Errorf("the page does not show the modes:\n%s\n%s", rows["h"], rows["capped"])
	}
	if strings.Contains(page, `data-sandbox="plain"`) {
		t.Errorf("the page shows a sandbox for plain, whose sandbox is off:\n%s", page)
	}
}
