package main

// End-to-end tests of the first steps as a new user meets them (issue 35,
// item 6): what tools, status and call say about servers that fail or take
// long to start, and how they name a tool the user mistyped.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// npmE404 is a server that fails as `npx -y` does for a package that does
// not exist: npm's E404 text on stderr, exit 1, before reading stdin.
func npmE404(name string) beServer {
	s := tb(name, "-stderr-text", "npm error code E404", "-fail-start", "1")
	s.Restart = "never"
	return s
}

// A server whose process exits at once is reported as a process that
// exited, with its code and stderr, not as one that "ended its session
// on server/discover" (the question was not the cause).
func TestFirstStepsExitedServerReportedAsExited(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("tb"), npmE404("pkg"))
	out, errOut, _ := runCLI(t, "status", "--config", cfg)
	if strings.Contains(errOut, "ended its session") || strings.Contains(out, "ended its session") {
		t.Errorf("the exit is blamed on server/discover:\n%s", errOut)
	}
	if !strings.Contains(errOut, "its process exited") || !strings.Contains(errOut, "exit status 1") {
		t.Errorf("stderr does not say the process exited, with its code:\n%s", errOut)
	}
	if !strings.Contains(out, "npm error code E404") {
		t.Errorf("status does not show the server's stderr:\n%s", out)
	}
}

// A tool named without its server's prefix, or mistyped, is "not found"
// with the names meant: `call echo` suggests tb.echo (and other.echo: the
// own name is not unique), `call tb.ehco` suggests tb.echo, and a name
// near nothing suggests nothing.
func TestFirstStepsCallDidYouMean(t *testing.T) {
	t.Parallel()
	one := beConfig(t, tb("tb"))
	two := beConfig(t, tb("tb"), tb("other"))
	cases := []struct {
		cfg, name string
		want      string
	}{
		{one, "echo", `"Tool not found: echo (did you mean tb.echo?)"`},
		{two, "echo", `"Tool not found: echo (did you mean other.echo or tb.echo?)"`},
		{one, "tb.ehco", `"Tool not found: tb.ehco (did you mean tb.echo?)"`},
		{one, "tb__ehco", `"Tool not found: tb__ehco (did you mean tb__echo?)"`}, // the naming it was given in
		{one, "zzz", `"Tool not found: zzz"`},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, "call", c.name, "--config", c.cfg)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("call %s: exit %d, want 1 with %s\nstdout:\n%s\nstderr:\n%s", c.name, code, c.want, out, errOut)
		}
	}
}

// REST: {"toolName": "NAME"} without "server" is the name a client sees,
// as "name" is (it was "Tool not found: /tb.echo"); an unknown name
// carries its did-you-mean; and arguments that do not match a TypeScript
// SDK server's input schema are the caller's error, 400 with the
// validation message (they were a 500).
func TestFirstStepsREST(t *testing.T) {
	t.Parallel()
	root := npmPeers(t)
	g := startHTTP(t, httpConfig(t, nil, tb("tb"), nodeServer(root, "everything", "server-everything", "stdio")))
	status, r := restCall(t, g.base, `{"toolName":"tb.echo","input":{"a":1}}`)
	if status != 200 || string(r.Result) != `{"a":1}` {
		t.Errorf(`toolName "tb.echo" without server: %d %+v`, status, r)
	}
	status, r = restCall(t, g.base, `{"name":"echo","arguments":{"message":"hi"}}`)
	if status != 404 || r.Error.Code != "TOOL_NOT_FOUND" || !strings.Contains(r.Error.Message, "did you mean everything.echo or tb.echo?") {
		t.Errorf(`"echo": %d %+v`, status, r)
	}
	status, r = restCall(t, g.base, `{"name":"everything.echo","arguments":{"message":3}}`)
	if status != 400 || r.Error.Code != "VALIDATION_ERROR" || !strings.Contains(r.Error.Message, "Input validation error") {
		t.Errorf("arguments the schema refuses: %d %+v, want 400 VALIDATION_ERROR with the validation message", status, r)
	}
	status, r = restCall(t, g.base, `{"server":"everything","toolName":"echo","input":{"message":"hi"}}`)
	if status != 200 {
		t.Errorf("a valid call: %d %+v", status, r)
	}
}

// A did-you-mean names only tools the caller may see: under a profile
// that leaves tb.slow out, a name one typo from it is suggested nothing,
// and "slow" (its own name) is not pointed at it either.
func TestFirstStepsDidYouMeanHidesWhatTheProfileHides(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 25000, "answer_tools": false,
			"profiles": []any{map[string]any{"name": "p", "include": []string{"tb.echo"}}}},
		"servers": []beServer{tb("tb")},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testutil.TempFile(t, "config.yaml", string(b))
	for name, want := range map[string]string{"tb.slwo": `"Tool not found: tb.slwo"`, "slow": `"Tool not found: slow"`, "tb.ecoh": "did you mean tb.echo?"} {
		out, errOut, code := runCLI(t, "call", name, "--profile", "p", "--config", cfg)
		if code != 1 || !strings.Contains(out, want) || strings.Contains(out, "tb.slow") {
			t.Errorf("call %s under the profile: exit %d, want %s and no tb.slow\nstdout:\n%s\nstderr:\n%s", name, code, want, out, errOut)
		}
	}
}

// A one-shot call starts only the server its tool belongs to when that
// server's snapshot (the last run's) names the tool: the other server,
// which counts its starts in a directory (-pid-dir), is not started. A
// name no snapshot has starts every server, as before.
func TestFirstStepsCallStartsOnlyItsServer(t *testing.T) {
	t.Parallel()
	pids := t.TempDir()
	cfg := beConfig(t, tb("tb"), tb("other", "-pid-dir", pids))
	env := baseEnv(t) // one HOME: the snapshots of the first run are the second's
	starts := func() int {
		t.Helper()
		ents, err := os.ReadDir(pids)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			os.Remove(filepath.Join(pids, e.Name()))
		}
		return len(ents)
	}
	if out, errOut, code := runCLIEnv(t, env, "tools", "--config", cfg); code != 0 || starts() != 1 {
		t.Fatalf("tools: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"tb.echo", "tb__echo"} {
		out, errOut, code := runCLIEnv(t, env, "call", name, `{"k":1}`, "--config", cfg)
		if code != 0 || !strings.Contains(out, `"k": 1`) {
			t.Fatalf("call %s: exit %d\n%s\n%s", name, code, out, errOut)
		}
		if n := starts(); n != 0 {
			t.Errorf("call %s started the other server %d times", name, n)
		}
	}
	if _, _, code := runCLIEnv(t, env, "call", "nosuch.tool", "--config", cfg); code != 1 || starts() != 1 {
		t.Errorf("call nosuch.tool: exit %d; the other server was not started", code)
	}
}

// startConfig is a config of these servers with the gateway's startup
// timeout and start limit given (milliseconds).
func startConfig(t *testing.T, startupMS, limitMS int, servers ...beServer) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": startupMS, "start_limit_ms": limitMS, "answer_tools": false},
		"servers": servers,
	})
	if err != nil {
		t.Fatal(err)
	}
	return testutil.TempFile(t, "config.yaml", string(b))
}

// runCombined runs the binary with stdout and stderr on one pipe, as a
// terminal shows them, and returns what it wrote and the exit code.
func runCombined(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(gatewayBin, args...)
	cmd.Env = baseEnv(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// status with a server that never starts honours gateway.startup_timeout_ms
// (it waited for gateway.start_limit_ms, 10 minutes, printing a line every
// 3 s, then exited 0): it stops waiting then, says so, shows the server as
// starting with the last line it wrote, and exits 1. So does a server
// that failed.
func TestFirstStepsStatusHonoursStartupTimeout(t *testing.T) {
	t.Parallel()
	never := tb("never", "-start-delay", "1h", "-stderr-text", "loading the model...")
	cfg := startConfig(t, 2000, 600000, tb("tb"), never)
	out, errOut, code := runCLI(t, "status", "--config", cfg)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "never ") {
			row = l
		}
	}
	if !strings.Contains(row, "starting") || !strings.Contains(row, "loading the model...") {
		t.Errorf("the row of the server that never starts: %q\n%s", row, out)
	}
	if !strings.Contains(errOut, "not started within 2s (gateway.startup_timeout_ms): never") || !strings.Contains(errOut, "not ready: never (starting)") {
		t.Errorf("stderr does not say the wait ran out:\n%s", errOut)
	}
	if n := strings.Count(errOut, "still starting"); n > 1 {
		t.Errorf("%d progress lines in 2 s, want at most 1:\n%s", n, errOut)
	}

	cfg = beConfig(t, tb("tb"), npmE404("pkg"))
	if out, errOut, code := runCLI(t, "status", "--config", cfg); code != 1 || !strings.Contains(errOut, "not ready: pkg (failed)") {
		t.Errorf("status with a failed server: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
}

// status prints its report first and the log after it: a backend's
// stderr lines (logged as they come) are not mixed into the table.
func TestFirstStepsStatusLogFollowsReport(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("tb", "-stderr-text", "tb says hello"), npmE404("pkg"))
	out, code := runCombined(t, "status", "--config", cfg)
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "SERVER") {
		t.Errorf("the output does not begin with the report:\n%s", out)
	}
	report := true
	for _, l := range lines {
		isLog := strings.Contains(l, " INF ") || strings.Contains(l, " ERR ") || strings.Contains(l, " WRN ")
		switch {
		case isLog:
			report = false
		case !report && strings.HasPrefix(l, "  npm error"):
			t.Errorf("a line of the report after the log began: %q\n%s", l, out)
		}
	}
	if report || !strings.Contains(out, "tb says hello") {
		t.Errorf("no log after the report:\n%s", out)
	}
}

// A server run by a package runner (npx -y) that has not answered yet is
// shown as fetching its package, and is waited for past the startup
// timeout (a download cut short starts over next time) until its start
// concludes: here gateway.start_limit_ms ends it.
func TestFirstStepsStatusShowsPackageFetch(t *testing.T) {
	t.Parallel()
	npx := filepath.Join(t.TempDir(), "npx"+exeSuffix())
	copyFile(t, backendBin, npx)
	fetch := beServer{Name: "pkg", Command: npx, Args: []string{"--", "@scope/server-pkg"}, Env: map[string]string{"TESTBACKEND_START_DELAY": "1h"}, Restart: "never"}
	cfg := startConfig(t, 1000, 7000, tb("tb"), fetch)
	out, errOut, code := runCLI(t, "status", "--config", cfg)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(errOut, "pkg (") || !strings.Contains(errOut, "npx is fetching @scope/server-pkg") {
		t.Errorf("the progress does not say npx is fetching the package:\n%s", errOut)
	}
	if strings.Contains(errOut, "not started within") || !strings.Contains(out, "start timed out") {
		t.Errorf("the wait did not last until the start limit ended the start:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
}

// A call whose server is still starting says what the server is doing
// meanwhile (it was silent): its last stderr line, after 3 s. The server
// takes 8 s to start, so the line is due well before it is ready.
func TestFirstStepsCallShowsStartProgress(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("slow", "-start-delay", "8s", "-stderr-text", "warming up the index"))
	out, errOut, code := runCLI(t, "call", "slow.echo", `{"a":1}`, "--config", cfg)
	if code != 0 || !strings.Contains(out, `"a": 1`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !regexp.MustCompile(`still starting: slow \(\d+\.\ds: warming up the index\)`).MatchString(errOut) {
		t.Errorf("the call does not say what the starting server is doing:\n%s", errOut)
	}
}
