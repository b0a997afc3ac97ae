package main

// End-to-end tests of the tools, status and call sub-commands.

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// runCLI runs the binary to completion and returns stdout, stderr and the
// exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCLIEnv(t, baseEnv(t), args...)
}

func TestSubcommands(t *testing.T) {
	t.Parallel()
	hang := tb("slowpoke")
	hang.TimeoutMS = 500
	broken := tb("broken", "-fail-start", "7")
	broken.Restart = "never"
	cfg := beConfig(t, tb("tb"), hang, broken)

	t.Run("tools table", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "tools", "--config", cfg)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		lines := strings.Split(out, "\n")
		if !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "STRICT NAME") {
			t.Errorf("header = %q", lines[0])
		}
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "tb.echo" && f[1] == "tb__echo" && f[2] == "tb" {
				found = true
			}
		}
		if !found {
			t.Errorf("no row for tb.echo / tb__echo / tb:\n%s", out)
		}
		if !strings.Contains(out, "broken (failed)") {
			t.Errorf("the failed server is not mentioned:\n%s", out)
		}
	})
	t.Run("tools json", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "tools", "--config", cfg, "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var raw struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		n := 0
		for _, tool := range raw.Tools {
			if tool["server"] == "tb" {
				n++
			}
			if tool["name"] == "tb.echo" && (tool["strict_name"] != "tb__echo" || tool["own_name"] != "echo") {
				t.Errorf("tb.echo = %v", tool)
			}
		}
		if n != len(tbTools) {
			t.Errorf("%d tools of tb, want %d:\n%s", n, len(tbTools), out)
		}
	})
	t.Run("status table", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "status", "--config", cfg)
		if code != 1 || !strings.Contains(errOut, "not ready: broken (failed)") { // broken failed
			t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
		}
		rows := map[string][]string{}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 2 && rows[f[0]] == nil {
				rows[f[0]] = f
			}
		}
		if r := rows["tb"]; len(r) < 2 || r[1] != "ready" || !slices.Contains(r, strconv.Itoa(len(tbTools))) {
			t.Errorf("tb row = %v\n%s", r, out)
		}
		if r := rows["broken"]; len(r) < 2 || r[1] != "failed" || !strings.Contains(strings.Join(r, " "), "exit status 7") {
			t.Errorf("broken row = %v\n%s", r, out)
		}
		if !strings.Contains(out, "failing at start with 7") {
			t.Errorf("no stderr tail of the failed server:\n%s", out)
		}
	})
	t.Run("status json", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "status", "--config", cfg, "--json")
		if code != 1 { // broken failed
			t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
		}
		var v struct {
			Servers []struct {
				Name       string   `json:"name"`
				State      string   `json:"state"`
				Tools      int      `json:"tools"`
				Error      string   `json:"error"`
				StderrTail []string `json:"stderr_tail"`
				PID        int      `json:"pid"`
				StartedAt  string   `json:"started_at"`
			} `json:"servers"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if len(v.Servers) != 3 {
			t.Fatalf("servers = %+v", v.Servers)
		}
		if s := v.Servers[0]; s.Name != "tb" || s.State != "ready" || s.Tools != len(tbTools) || s.PID == 0 || s.StartedAt == "" {
			t.Errorf("tb = %+v", s)
		}
		if s := v.Servers[2]; s.Name != "broken" || s.State != "failed" || !strings.Contains(s.Error, "exit status 7") ||
			!slices.ContainsFunc(s.StderrTail, func(l string) bool { return strings.Contains(l, "failing at start with 7") }) {
			t.Errorf("broken = %+v", s)
		}
	})
	t.Run("call ok", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"tb.echo", "tb__echo"} {
			out, errOut, code := runCLI(t, "call", name, `{"n":12345678901234567890123}`, "--config", cfg)
			if code != 0 {
				t.Fatalf("%s: exit %d\n%s\n%s", name, code, out, errOut)
			}
			if !strings.Contains(out, `"structuredContent"`) || !strings.Contains(out, "12345678901234567890123") {
				t.Errorf("%s printed:\n%s", name, out)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("%s: not JSON: %v\n%s", name, err, out)
			}
		}
	})
	// A backend's text reaches the terminal as JSON whose strings keep
	// what a terminal acts on or a person does not see written as \u
	// escapes: the encoder escapes C0 controls (ESC) but not C1 ones (CSI
	// U+009B, OSC U+009D, which xterm acts on), bidi overrides or
	// zero-width characters. The JSON means the same.
	t.Run("call writes out hidden characters", func(t *testing.T) {
		t.Parallel()
		const text = "a\u009b8mhidden\u009d0;title\u0007 \u202eb\u200bc \U000e0041"
		out, errOut, code := runCLI(t, "call", "tb.echo", `{"t":"a\u009b8mhidden\u009d0;title\u0007 \u202eb\u200bc \udb40\udc41"}`, "--config", cfg)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && safetext.Invisible(r) }); i >= 0 {
			t.Errorf("raw %U in the output:\n%q", []rune(out[i:])[0], out)
		}
		var v struct {
			StructuredContent struct{ T string } `json:"structuredContent"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.StructuredContent.T != text {
			t.Errorf("decodes to %q (%v), want %q", v.StructuredContent.T, err, text)
		}
	})
	t.Run("call errors", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			args []string
			want string
			code int
		}{
			{[]string{"tb.odd", `{"isError":true}`}, `"isError": true`, 1},
			{[]string{"slowpoke.hang"}, `"code": -32001`, 1},
			{[]string{"broken.echo", `{}`}, `"code": -32000`, 1},
			{[]string{"nope.tool", `{}`}, `"code": -32602`, 1},
			{[]string{"tb.echo", `not json`}, "", 2},
		}
		for _, c := range cases {
			out, errOut, code := runCLI(t, append(append([]string{"call"}, c.args...), "--config", cfg)...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("call %v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, c.want, out, errOut)
			}
		}
	})
}
