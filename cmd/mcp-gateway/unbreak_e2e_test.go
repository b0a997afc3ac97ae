package main

// Regression tests of the adversarial findings of docs/errors.md and
// docs/configuration.md ("Limits"): what a hostile or broken backend or
// client must not be able to do to the gateway or to the terminal.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// evil is backend-controlled text that would clear the screen, set the
// window title, and forge a log record of its own.
const evil = "\x1b[2J\x1b]0;pwned\x07ok\ntime=00:00:00 level=ERROR msg=forged"

// Escape sequences and control characters in a backend's descriptions and
// stderr never reach the terminal: not in `tools`, not in `status`'s stderr
// tail, not in the gateway's log lines.
func TestNoTerminalInjection(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t,
		tb("desc", "-describe", evil),
		tb("noisy", "-stderr-text", evil, "-fail-start", "3"),
	)
	out, errOut, _ := runCLI(t, "tools", "--config", cfg)
	st, stErr, _ := runCLI(t, "status", "--config", cfg)
	for what, text := range map[string]string{"tools stdout": out, "tools stderr": errOut, "status stdout": st, "status stderr": stErr} {
		if strings.ContainsAny(text, "\x1b\x07\r") {
			t.Errorf("%s holds control characters: %q", what, text)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "time=00:00:00") {
				t.Errorf("%s has a forged line: %q", what, line)
			}
		}
	}
	if !strings.Contains(out, "testbackend tool echoo") && !strings.Contains(out, "testbackend tool echo") {
		t.Errorf("tools lacks the description:\n%s", out)
	}
	if !strings.Contains(st, "\n  ok\n  time=00:00:00 level=ERROR msg=forged\n") {
		t.Errorf("status lacks the stripped stderr line:\n%s", st)
	}
}

// A backend that sends 20,000 log notifications in one burst: the gateway's
// stderr gets at most the burst allowance and a count of what was dropped,
// and the call is still answered; the count of what was dropped is
// reported at the latest when the backend stops.
func TestBackendLogFloodRateLimited(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	start := time.Now()
	r := s.callTool("tb.log", `{"count":20000,"data":"flood line"}`)
	if r.Map()["result"] == nil {
		t.Fatalf("log call: %s", r)
	}
	// The flood is before the result on the backend's stdout: by now the
	// gateway has read all of it, at a pace a loaded machine sets. The
	// allowance is the burst plus 200 a second of that.
	limit := 1000 + int(200*time.Since(start).Seconds()) + 1
	s.Stdin.Close()
	s.Exited(t, 10*time.Second)
	errOut := s.Stderr.String()
	n := strings.Count(errOut, "flood line")
	if n < 1000 || n > limit {
		t.Errorf("%d flood lines on stderr, want the burst (1000) and at most %d of 20000", n, limit)
	}
	dropped := 0
	for _, m := range regexp.MustCompile(`records dropped.* dropped=(\d+)`).FindAllStringSubmatch(errOut, -1) {
		k, _ := strconv.Atoi(m[1])
		dropped += k
	}
	if n+dropped != 20000 {
		t.Errorf("%d logged + %d counted as dropped, want 20000:\n%s", n, dropped, lastLines(errOut, 5))
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// A backend gets the allowlist of the gateway's environment plus its own
// env: not OPENAI_API_KEY or cloud credentials; the proxy, locale and the
// self-recursion marker pass. inherit_env: true gives it everything.
func TestBackendEnvironmentAllowlist(t *testing.T) {
	t.Parallel()
	least := tb("least")
	least.Env = map[string]string{"OWN": "mine", "FORWARDED": "${GW_FORWARD}"}
	all := tb("all")
	all.Inherit = true
	s := startRaw(t, beConfig(t, least, all), "e2e",
		"OPENAI_API_KEY=sk-e2e-secret-0000", "AWS_SECRET_ACCESS_KEY=aws-e2e-secret", "GW_FORWARD=fwd",
		"HTTPS_PROXY=http://proxy.example:3128", "no_proxy=localhost", "LC_ALL=C.UTF-8", "XDG_CONFIG_HOME=/x")
	environ := func(server string) map[string]string {
		m := map[string]string{}
		for _, kv := range s.structured(server+".stats", `{}`)["environ"].([]any) {
			k, v, _ := strings.Cut(kv.(string), "=")
			m[k] = v
		}
		return m
	}
	got := environ("least")
	for _, k := range []string{"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GW_FORWARD", "GORACE"} {
		if _, ok := got[k]; ok {
			t.Errorf("least-privilege backend got %s", k)
		}
	}
	for k, v := range map[string]string{"OWN": "mine", "FORWARDED": "fwd", "HTTPS_PROXY": "http://proxy.example:3128",
		"no_proxy": "localhost", "LC_ALL": "C.UTF-8", "XDG_CONFIG_HOME": "/x"} {
		if got[k] != v {
			t.Errorf("least-privilege backend: %s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"PATH", "HOME", "MCP_GATEWAY_CHAIN"} {
		if got[k] == "" {
			t.Errorf("least-privilege backend lacks %s", k)
		}
	}
	if all := environ("all"); all["OPENAI_API_KEY"] != "sk-e2e-secret-0000" || all["AWS_SECRET_ACCESS_KEY"] != "aws-e2e-secret" {
		t.Errorf("inherit_env: true lost the gateway's environment: %v", all)
	}
}

// "Content-Length: 1000000000000" is answered at once with -32700 and the
// next message is served, not swallowed until stdin closes.
func TestHugeContentLengthAnsweredAndResynchronised(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(frame(initMsg))
	p.readFramed()
	p.send("Content-Length: 1000000000000\r\n\r\n" + frame(pingMsg))
	if r := p.readFramed(); errCode(r) != -32700 {
		t.Fatalf("first reply = %v, want -32700", r)
	}
	if r := p.readFramed(); idOf(r) != "99" || r["result"] == nil {
		t.Fatalf("second reply = %v, want the ping's", r)
	}
}

// A backend result with bytes that are not UTF-8 reaches the client as
// valid UTF-8 (U+FFFD for each run of bad bytes), not raw: a strict client
// decoder would otherwise lose the whole session.
func TestBackendInvalidUTF8Repaired(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e")
	r := s.callTool("tb.odd", `{"badUTF8":true}`)
	if !utf8.Valid(r.Raw) {
		t.Fatalf("reply is not UTF-8: %q", r.Raw)
	}
	if !strings.Contains(string(r.Raw), "ok \ufffd end") {
		t.Errorf("reply = %s, want the text with U+FFFD", r.Raw)
	}
}

// 5,000 sampling requests from a backend to a client that never answers:
// 64 are forwarded and time out after the backend's call timeout (answered
// -32001); the rest are refused at once (-32000). Nothing is parked for
// ever (the finding: 20,000 goroutines and 295 MB).
func TestBackendRequestFloodBoundedAndTimedOut(t *testing.T) {
	t.Parallel()
	const n = 5000 // their refusals fit the reply backlog while the backend floods without reading
	s, replies := samplingFlood(t, n, false)
	if replies["-32001"] != 64 || replies["-32000"] != n-64 {
		t.Errorf("answers by code = %v, want 64 timeouts (-32001) and %d refusals (-32000)", replies, n-64)
	}
	if got := len(s.Since(0, "sampling/createMessage")); got != 64 {
		t.Errorf("%d sampling requests reached the client, want 64", got)
	}
}

// A backend that sends its requests under one id while the first is in
// flight gets -32600 for each of the others: only the first reaches the
// client. (The limit of 64 counted ids, so such a flood went past it: every
// request reached the client.)
func TestBackendRequestDuplicateIDsRefused(t *testing.T) {
	t.Parallel()
	const n = 200
	s, replies := samplingFlood(t, n, true)
	if replies["-32600"] != n-1 || replies["-32001"] != 1 {
		t.Errorf("answers by code = %v, want %d duplicates refused (-32600) and the first timed out (-32001)", replies, n-1)
	}
	if got := len(s.Since(0, "sampling/createMessage")); got != 1 {
		t.Errorf("%d sampling requests reached the client, want 1", got)
	}
}

// samplingFlood has a backend with a 1 s call timeout send n sampling
// requests (all under one id with sameID) to a client that never answers
// them, and returns the session and the backend's count of the answers it
// got, by error code ("0" for results), once all n are answered.
func samplingFlood(t *testing.T, n int, sameID bool) (*proc, map[string]int64) {
	t.Helper()
	srv := tb("tb")
	srv.TimeoutMS = 1000
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, srv))
	s, _ := initSession(t, p, "e2e", `{"sampling":{}}`)
	if r := s.callTool("tb.deaf", fmt.Sprintf(`{"flood":%d,"method":"sampling/createMessage","same_id":%v}`, n, sameID)); r.Map()["result"] == nil {
		t.Fatalf("deaf: %s", r)
	}
	replies := map[string]int64{}
	testutil.WaitFor(t, 20*time.Second, "every flood request answered", func() bool {
		// The stats call shares the backend's 1 s call timeout with the
		// flood it queues behind; on a loaded machine it can run out. That
		// only means the counts are not known yet: ask again. Any other
		// error fails the test, and the counts are exact.
		r := s.callTool("tb.stats", `{}`)
		if r.Map()["error"] != nil {
			if code, msg, _ := r.Error(t); code == -32001 {
				t.Logf("stats call: %s", msg)
				return false
			}
		}
		m, _ := structuredContent(t, r)["floodReplies"].(map[string]any)
		var total int64
		for k, v := range m {
			replies[k], _ = v.(json.Number).Int64()
			total += replies[k]
		}
		return total == int64(n)
	})
	return s, replies
}

// A client that never reads the gateway's stderr: 20,000 bad lines, each
// answered on stdout and logged on stderr (far more than a pipe holds),
// and then a ping, which is still answered — logging never blocks the
// stdin reader. The gateway also exits promptly at the end of input.
func TestUnreadStderrStallsNothing(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(gatewayBin, "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	cmd.Env = baseEnv(t)
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer errR.Close() // open and never read until the end
	cmd.Stderr = errW
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errW.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	go func() {
		var b strings.Builder
		for i := range 20000 {
			fmt.Fprintf(&b, "not json %d %s\n", i, strings.Repeat("x", 100))
		}
		b.WriteString(pingMsg + "\n")
		stdin.Write([]byte(b.String()))
	}()
	got := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":99`) {
				got <- true
				return
			}
		}
		got <- false
	}()
	// A stdin reader blocked by logging would wait forever: the waits below
	// only keep a hung gateway from hanging the test; 20,000 answered lines
	// take a minute and more with both cores busy and -race.
	const hung = 4 * testutil.DefaultTimeout
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("stdout ended without the ping's reply")
		}
	case <-time.After(hung):
		t.Fatal("the ping was not answered while stderr was not read")
	}
	stdin.Close()
	select {
	case err := <-done:
		done <- err
	case <-time.After(hung):
		t.Fatal("the gateway did not exit at the end of input while stderr was not read")
	}
}

// Requests the session's state does not allow get a JSON-RPC code, not
// go-sdk's 0: a list before initialize, and a second initialize.
func TestSessionStateErrorsHaveACode(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}` + "\n")
	if r := p.readLine(); errCode(r) != -32600 {
		t.Errorf("tools/list before initialize: %v, want -32600", r)
	}
	p.send(initMsg + "\n")
	p.readLine()
	p.send(strings.Replace(initMsg, `"id":1`, `"id":6`, 1) + "\n")
	if r := p.readLine(); errCode(r) != -32600 {
		t.Errorf("second initialize: %v, want -32600", r)
	}
}

// --debug PATH: an existing file's 0644 becomes 0600, and a symbolic link
// is refused (exit 2) rather than followed.
func TestDebugFileModeAndSymlink(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("file modes and symbolic links are Unix notions here")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "debug.log")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testutil.TempFile(t, "config.yaml", emptyConfig)
	if _, errOut, code := runCLI(t, "status", "--config", cfg, "--debug="+file); code != 0 {
		t.Fatalf("status --debug: exit %d\n%s", code, errOut)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("debug file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(filepath.Join(dir, "target.log"), link); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, "status", "--config", cfg, "--debug="+link); code != 2 || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("status --debug SYMLINK: exit %d, %q; want 2 and a clear error", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "target.log")); err == nil {
		t.Error("the symbolic link was followed")
	}
}

// A command with its arguments in one string fails with a hint to use
// args, not a bare "no such file or directory".
func TestCommandWithSpacesSuggestsArgs(t *testing.T) {
	t.Parallel()
	bad := beServer{Name: "spaced", Command: backendBin + " -name x"}
	out, errOut, _ := runCLI(t, "status", "--config", beConfig(t, bad))
	if !strings.Contains(out+errOut, "put its arguments in args") {
		t.Errorf("status does not suggest args:\n%s\n%s", out, errOut)
	}
}

// Params go-sdk cannot decode are answered -32602 in JSON's terms: which
// member, which type; never go-sdk's Go type names, nor the params quoted
// back.
func TestInvalidParamsWithoutGoTypes(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", testutil.TempFile(t, "config.yaml", emptyConfig))
	p.send(initMsg + "\n" + initializedMsg + "\n")
	p.readLine()
	for _, tc := range []struct{ req, want string }{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":5}}`, "cursor must be a string"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}`, "params must be an object"},
		{`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"x","arguments":{"a":1}}}`, "arguments.a must be a string"},
		{`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":{"x":"Go struct field"}}}`, "uri must be a string"},
		{`{"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}`, "params must be an object"},
	} {
		p.send(tc.req + "\n")
		r := p.readLine()
		e, _ := r["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if errCode(r) != -32602 || msg != tc.want {
			t.Errorf("%s:\n got %v\nwant -32602 %q", tc.req, r, tc.want)
		}
		if raw, _ := json.Marshal(r); strings.Contains(string(raw), "mcp.") || strings.Contains(string(raw), "Go ") {
			t.Errorf("%s: reply names Go types: %s", tc.req, raw)
		}
	}
}

// A backend whose start times out when the status wait ends (start limit
// equal to the wait) is reported as what it is — failed, or restarting,
// with the timeout as its error — never as still starting; and with every
// backend failed, status exits 1.
func TestStatusShowsTimedOutStart(t *testing.T) {
	t.Parallel()
	hang := tb("hang", "-start-delay", "60s")
	never := tb("never", "-start-delay", "60s")
	never.Restart = "never"
	b, err := json.Marshal(map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 1000, "start_limit_ms": 1000, "answer_tools": false},
		"servers": []beServer{hang, never},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testutil.TempFile(t, "config.yaml", string(b))
	for range 3 { // it used to fail every time; the race is at one instant
		out, errOut, code := runCLI(t, "status", "--json", "--wait", "1s", "--config", cfg)
		if code != 1 || !strings.Contains(errOut, "every backend failed to start") {
			t.Fatalf("status: exit %d, want 1 (every backend failed)\n%s", code, errOut)
		}
		var st struct {
			Servers []struct{ Name, State, Error string }
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		want := map[string]string{"hang": "restarting", "never": "failed"}
		if len(st.Servers) != 2 {
			t.Fatalf("status: %s", out)
		}
		for _, s := range st.Servers {
			if s.State != want[s.Name] {
				t.Errorf("%s: state %q, want %q", s.Name, s.State, want[s.Name])
			}
			if !strings.Contains(s.Error, "start timed out after 1s") {
				t.Errorf("%s: error %q, want the start timeout", s.Name, s.Error)
			}
		}
	}
}

// A plain configuration with tens of thousands of servers loads: it used
// to fail as "too complex (too many aliases or merge keys)" from 20,000 up.
func TestLargeConfigLoads(t *testing.T) {
	t.Parallel()
	n := 60000
	if testutil.Race {
		n = 20000 // the race detector makes loading about ten times slower
	}
	var b strings.Builder
	b.WriteString("servers:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {name: s%d, command: npx, args: [-y, p%d], enabled: false}\n", i, i)
	}
	cfg := testutil.TempFile(t, "config.yaml", b.String())
	start := time.Now()
	_, errOut, code := runCLI(t, "--show-config", "--config", cfg)
	if code != 0 {
		t.Fatalf("%d servers: exit %d\n%.500s", n, code, errOut)
	}
	t.Logf("%d servers: --show-config in %s", n, time.Since(start).Round(time.Millisecond))
	if !strings.Contains(errOut, fmt.Sprintf(`"s%d"`, n-1)) {
		t.Errorf("the last server is not in --show-config")
	}
}
