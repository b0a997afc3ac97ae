package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// exe is the file name of a binary on this OS: name.exe on Windows.
func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// Paths of the binaries built once by TestMain.
var (
	gatewayBin string // built by scripts/build
	backendBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-gateway-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gatewayBin = filepath.Join(dir, exe("mcp-gateway"))
	backendBin = filepath.Join(dir, exe("testbackend"))
	err = buildGateway(gatewayBin)
	if err == nil {
		err = build(backendBin, "../../backends/testbackend")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildGateway builds the gateway as users and releases do, with
// scripts/build (which links in the version).
func buildGateway(out string) error {
	args := []string{"../../scripts/build", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("bash", args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scripts/build: %w", err)
	}
	return nil
}

func build(out, pkg string) error {
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}

// writeConfig writes a config file into the test's temp dir.
func writeConfig(t testing.TB, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// baseEnv is a clean environment for the gateway under test: no API key,
// no debug, no user config. GORACE=atexit_sleep_ms=0 spares each
// race-built process (gateway, reaper, testbackend) the race runtime's 1 s
// sleep at exit; races are still reported, and fail the tests through the
// exit status and stderr.
func baseEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1", "GORACE=atexit_sleep_ms=0"}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	if runtime.GOOS == "windows" {
		// The home directory is USERPROFILE there, and programs need
		// SystemRoot (and TEMP) to run at all.
		env = append(env, "USERPROFILE="+home)
		for _, k := range []string{"SystemRoot", "TEMP", "TMP", "PATHEXT", "ComSpec"} {
			if v := os.Getenv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
	}
	return append(env, extra...)
}

// proc is the gateway binary serving stdio, driven by raw bytes.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
	done   chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startGateway runs the binary with args and env; it is killed at the end
// of the test if still running.
func startGateway(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(gatewayBin, args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), stderr: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-p.done
			t.Errorf("gateway did not exit within 10s of stdin closing\nstderr:\n%s", p.stderr)
		}
		if t.Failed() {
			t.Logf("gateway stderr:\n%s", p.stderr)
		}
	})
	return p
}

func (p *proc) send(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, s); err != nil {
		p.t.Fatalf("write to gateway: %v", err)
	}
}

// readFramed reads one Content-Length framed message.
func (p *proc) readFramed() map[string]any {
	p.t.Helper()
	n := -1
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			p.t.Fatalf("read header: %v (stderr: %s)", err, p.stderr)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, val, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(name, "Content-Length") {
			p.t.Fatalf("unexpected header line %q", line)
		}
		n, err = strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			p.t.Fatalf("bad Content-Length %q", val)
		}
	}
	if n < 0 {
		p.t.Fatal("framed reply without Content-Length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(p.out, body); err != nil {
		p.t.Fatalf("read body: %v", err)
	}
	return decode(p.t, body)
}

// readLine reads one line-delimited message.
func (p *proc) readLine() map[string]any {
	p.t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("read line: %v (stderr: %s)", err, p.stderr)
	}
	return decode(p.t, line)
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("reply is not a JSON object: %v: %q", err, b)
	}
	return m
}

func frame(s string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(s), s) }

const (
	initMsg        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	initializedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listMsg        = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	pingMsg        = `{"jsonrpc":"2.0","id":99,"method":"ping"}`
)

// errCode returns a reply's error code, or 0.
func errCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	n, _ := e["code"].(json.Number).Int64()
	return int(n)
}

func idOf(m map[string]any) string {
	switch v := m["id"].(type) {
	case nil:
		return "null"
	case json.Number:
		return v.String()
	case string:
		return strconv.Quote(v)
	}
	return fmt.Sprint(m["id"])
}

func toolNames(t *testing.T, m map[string]any) []string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", m)
	}
	var names []string
	for _, tool := range res["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

// exited waits for the gateway process to end and leaves its exit
// for startGateway's cleanup.
func (p *proc) exited(d time.Duration) error {
	p.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		p.t.Fatalf("gateway did not exit within %s\nstderr:\n%s", d, p.stderr)
	}
	return nil
}
