package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestGolden freezes every message a user sees from Load and --show-config.
// Each testdata/golden/*.txt holds sections "-- NAME --": the file
// (config.yaml or config.json), optionally "env" (NAME=value lines) and
// "flags" (debug, debug-file PATH, listen ADDR, profile NAME, show-config),
// "unix-only" (empty: the case's paths are Unix's, so it is skipped on
// Windows), and "want":
// the joined errors, or "ok" and the warnings (and the --show-config
// document when asked for), with the temporary directory removed from paths.
// go test ./config -run Golden -update rewrites the want sections.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			names, sections := splitSections(string(data))
			if _, ok := sections["unix-only"]; ok && runtime.GOOS == "windows" {
				t.Skip("the case's paths are Unix's (/srv is not absolute on Windows)")
			}
			got := runGolden(t, sections)
			if testutil.Update() {
				var b strings.Builder
				for _, n := range names {
					if n == "want" {
						continue
					}
					b.WriteString("-- " + n + " --\n" + sections[n])
				}
				b.WriteString("-- want --\n" + got)
				if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := sections["want"]; got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// splitSections splits a golden file into its "-- NAME --" sections.
func splitSections(s string) (names []string, sections map[string]string) {
	sections = map[string]string{}
	cur := ""
	for _, line := range strings.SplitAfter(s, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") {
			cur = strings.TrimSuffix(strings.TrimPrefix(t, "-- "), " --")
			names = append(names, cur)
			sections[cur] = ""
			continue
		}
		if cur != "" {
			sections[cur] += line
		}
	}
	return names, sections
}

// runGolden loads the case's file and renders the outcome.
func runGolden(t *testing.T, sections map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	opts := LoadOptions{Home: "/home/me"}
	var keys []string
	for k := range sections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "config.") {
			opts.Path = filepath.Join(dir, k)
			if err := os.WriteFile(opts.Path, []byte(sections[k]), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if opts.Path == "" {
		opts.Home = dir // no file: the default path, which does not exist
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(sections["env"]), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	opts.Env = mapEnv(env)
	show := false
	for _, line := range strings.Split(strings.TrimSpace(sections["flags"]), "\n") {
		name, arg, _ := strings.Cut(line, " ")
		switch name {
		case "debug":
			opts.Flags.Debug = true
		case "debug-file":
			opts.Flags.DebugFile = arg
		case "listen":
			opts.Flags.Listen = arg
		case "profile":
			opts.Flags.Profile = arg
		case "show-config":
			show = true
		case "":
		default:
			t.Fatalf("unknown flag line %q", line)
		}
	}
	c, s, err := Load(opts)
	var b strings.Builder
	if err != nil {
		checkOnlyErrors(t, err)
		b.WriteString(err.Error() + "\n")
	} else {
		b.WriteString("ok\n")
		for _, w := range s.Warnings {
			b.WriteString("warning: " + w + "\n")
		}
		if show {
			var buf bytes.Buffer
			if err := WriteShowConfig(&buf, "golden", c, s); err != nil {
				t.Fatal(err)
			}
			b.Write(buf.Bytes())
		}
	}
	out := strings.ReplaceAll(b.String(), dir+string(filepath.Separator), "")
	if runtime.GOOS == "windows" {
		// The --show-config JSON doubles a Windows path's backslashes: the
		// directory goes the same way, and the rest reads as the
		// slash-separated paths the golden files hold (no other backslash
		// is in them).
		out = strings.ReplaceAll(out, strings.ReplaceAll(dir+`\`, `\`, `\\`), "")
		out = strings.ReplaceAll(out, `\\`, "/")
	}
	return out
}

// TestShowConfigReadsBack checks that the names --show-config prints are the
// names the file takes (both come from the same struct tags): the effective
// configuration, printed and read back as a file, is the same configuration.
func TestShowConfigReadsBack(t *testing.T) {
	c1, s1 := mustLoad(t, `openai: {api_key_env: MY_KEY, base_url: "https://proxy.example.com/v1"}
request: {timeout_ms: 1000, max_retries: 1}
model_profiles: {answer: {model: m, reasoning_effort: low, verbosity: high}, answer_quick: {model: q}}
policy: {max_citations: 4, system: {source: file, path: /p.md, merge: append}}
search: {defaults: {recency_days: 2, max_results: 3, domains: [a.example]}}
server: {debug: true, debug_file: /d.log, show_config_on_start: true}
gateway:
  {separator: _, strict_names: "false", tools_mode: lazy, default_timeout_ms: 5, startup_timeout_ms: 6,
   answer_tools: false, line_mode: true, http: {listen: "127.0.0.1:1", allowed_origins: ["*"], auth_token_env: T, stateless: true},
   policy: {rules: [{name: r, when: "true", allow: [a], deny: [a.x]}]},
   rate_limits: {identity: {per_minute: 60, burst: 2}, tools: [{tools: [a.*], per_minute: 6}]},
   entry_name: gw, profile: w, profiles: [{name: w, include: [a], exclude: [a.x]}, {name: v, exclude: [b]}]}
servers:
  - {name: a, command: c, args: [x], env: {MODE: m}, cwd: /w, timeout_ms: 7, enabled: false, prefix: p, type: stdio,
     tools: {include: [i], exclude: [e]}, restart: never}
  - {name: b, url: "https://h.example/mcp", headers: {X-Mode: m}, type: sse}
`, nil, Flags{})
	var buf bytes.Buffer
	if err := WriteShowConfig(&buf, "dev", c1, s1); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Effective map[string]any `json:"effective"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc.Effective["openai"].(map[string]any), "api_key")
	text, err := json.Marshal(doc.Effective)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := mustLoad(t, string(text), nil, Flags{})
	for i := range c1.Servers {
		c1.Servers[i].Source, c2.Servers[i].Source = "", ""
	}
	if !reflect.DeepEqual(c1, c2) {
		t.Errorf("read back:\n got %+v\nwant %+v\nfrom %s", c2, c1, text)
	}
}

// TestFileMessages freezes the messages about the file itself.
func TestFileMessages(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("#\n"), maxFileSize/2+1), 0o600); err != nil {
		t.Fatal(err)
	}
	nope := filepath.Join(dir, "nope.yaml")
	_, statErr := os.Stat(nope) // the system's own words: "no such file or directory"
	for path, want := range map[string]string{
		nope: nope + ": " + errors.Unwrap(statErr).Error(),
		dir:  dir + ": is a directory, not a file",
		big:  big + ": file is larger than 4194304 bytes",
	} {
		_, _, err := Load(LoadOptions{Path: path})
		if err == nil || err.Error() != want {
			t.Errorf("Load(%s) = %v, want %s", path, err, want)
		}
	}
}
