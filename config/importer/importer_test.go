package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"gopkg.in/yaml.v3"
)

// layout is where each fixture goes for a client on Linux: testdata file →
// path under HOME ("~/") or the project directory ("./").
var layout = map[string][][2]string{
	"claude-desktop": {{"claude_desktop_config.json", "~/.config/Claude/claude_desktop_config.json"}},
	"claude-code":    {{".claude.json", "~/.claude.json"}, {".mcp.json", "./.mcp.json"}},
	"cursor":         {{"mcp.json", "~/.cursor/mcp.json"}, {"project-mcp.json", "./.cursor/mcp.json"}},
	"vscode":         {{"mcp.json", "~/.config/Code/User/mcp.json"}, {"workspace-mcp.json", "./.vscode/mcp.json"}},
	"windsurf":       {{"mcp_config.json", "~/.codeium/windsurf/mcp_config.json"}},
	"codex":          {{"config.toml", "~/.codex/config.toml"}},
	"gemini":         {{"settings.json", "~/.gemini/settings.json"}, {"project-settings.json", "./.gemini/settings.json"}},
}

// world is a home and a project directory holding one client's fixtures,
// and a stand-in for this gateway's executable.
type world struct {
	home, dir, exe string
}

func newWorld(t *testing.T) world {
	t.Helper()
	root := t.TempDir()
	exe := "mcp-gateway"
	if runtime.GOOS == "windows" {
		exe += ".exe" // what exec.LookPath finds there
	}
	w := world{home: filepath.Join(root, "home"), dir: filepath.Join(root, "project"), exe: filepath.Join(root, "bin", exe)}
	for _, d := range []string{w.home, w.dir, filepath.Dir(w.exe)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(w.exe, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return w
}

// fill replaces the fixtures' placeholders with the world's paths, escaped
// for a JSON or TOML string (Windows' backslashes); unfill does the
// reverse on the YAML, for golden files, with "/" for the separator.
func (w world) fill(s string) string {
	esc := func(p string) string { b, _ := json.Marshal(p); return string(b[1 : len(b)-1]) }
	return strings.NewReplacer("@GATEWAY@", esc(w.exe), "@HOME@", esc(w.home), "@DIR@", esc(w.dir)).Replace(s)
}

func (w world) unfill(s string) string {
	return filepath.ToSlash(strings.NewReplacer(w.exe, "@GATEWAY@", w.dir, "@DIR@", w.home, "@HOME@").Replace(s))
}

// unfillYAML is unfill of an import's YAML, value by value: the YAML is
// encoded again with each path replaced by a stand-in that YAML quotes as
// it quotes a Unix path, then the stand-ins by the placeholders, so that
// the golden file is the same on every OS ("C:\..." is quoted in a flow
// list where "/home/..." is not).
func (w world) unfillYAML(t *testing.T, data []byte) string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the import's YAML does not parse: %v\n%s", err, data)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		n.HeadComment, n.LineComment, n.FootComment = w.unfill(n.HeadComment), w.unfill(n.LineComment), w.unfill(n.FootComment)
		if v := standIns.Replace(w.unfill(n.Value)); n.Kind == yaml.ScalarNode && v != n.Value {
			n.Value = v
			n.Style &^= yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	return placeholders.Replace(buf.String())
}

// standIns are Unix-like paths for the placeholders in YAML values, and
// placeholders the way back.
var (
	standIns     = strings.NewReplacer("@GATEWAY@", "/unfill.gateway", "@HOME@", "/unfill.home", "@DIR@", "/unfill.dir")
	placeholders = strings.NewReplacer("/unfill.gateway", "@GATEWAY@", "/unfill.home", "@HOME@", "/unfill.dir", "@DIR@")
)

func (w world) place(t *testing.T, client string) {
	t.Helper()
	for _, l := range layout[client] {
		data, err := os.ReadFile(filepath.Join("testdata", client, l[0]))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(w.dir, strings.TrimPrefix(l[1], "./"))
		if rest, ok := strings.CutPrefix(l[1], "~/"); ok {
			dst = filepath.Join(w.home, rest)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(w.fill(string(data))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func (w world) options(from string) Options {
	return Options{
		From: from, Home: w.home, Dir: w.dir, GOOS: "linux",
		Env:  func(string) (string, bool) { return "", false },
		Self: config.Self{Executable: w.exe, Home: w.home, Dir: w.dir, Config: filepath.Join(w.home, ".config", "mcp-gateway", "config.yaml")},
	}
}

// imported places a client's fixtures in a new world and imports them.
func imported(t *testing.T, client string) (world, *Result) {
	t.Helper()
	w := newWorld(t)
	w.place(t, client)
	res, err := Import(w.options(client))
	if err != nil {
		t.Fatal(err)
	}
	return w, res
}

// loadYAML loads data with config.Load, as the gateway would.
func loadYAML(t *testing.T, data []byte) *config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "imported.yaml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: p})
	if err != nil {
		t.Fatalf("imported YAML does not load: %v\n%s", err, data)
	}
	return cfg
}

// TestGolden imports each client's fixtures from their documented places
// and compares the YAML with testdata/CLIENT/golden.yaml; the YAML must
// load with config.Load, with every imported server in it.
func TestGolden(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			w, res := imported(t, c.Name)
			got := res.YAML()
			unfilled := w.unfillYAML(t, got)
			golden := filepath.Join("testdata", c.Name, "golden.yaml")
			if testutil.Update() {
				if err := os.WriteFile(golden, []byte(unfilled), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if unfilled != string(want) {
				t.Errorf("YAML differs from %s (go test -update to accept):\n%s", golden, unfilled)
			}
			cfg := loadYAML(t, got)
			if len(cfg.Servers) != len(res.Entries) || len(res.Entries) == 0 {
				t.Fatalf("loaded %d servers, imported %d", len(cfg.Servers), len(res.Entries))
			}
			for i, s := range cfg.Servers {
				e := res.Entries[i].Server
				if s.Name != e.Name || s.Command != e.Command || (s.URL != e.URL && !strings.Contains(e.URL, "${")) || s.Enabled != e.Enabled || len(s.Args) != len(e.Args) || len(s.Env) != len(e.Env) || len(s.Headers) != len(e.Headers) {
					t.Errorf("server %d: loaded %+v, imported %+v", i, s, e)
				}
			}
		})
	}
}

// The gateway's own entry is never imported.
func TestSelfNotImported(t *testing.T) {
	for _, client := range []string{"claude-desktop", "codex"} {
		w, res := imported(t, client)
		if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Why, "runs mcp-gateway itself") {
			t.Errorf("%s: skipped = %+v", client, res.Skipped)
		}
		for _, e := range res.Entries {
			if e.Server.Command == w.exe {
				t.Errorf("%s: the gateway's entry %q was imported", client, e.Key)
			}
		}
	}
}

// Names are sanitised, and collisions get a suffix.
func TestNames(t *testing.T) {
	es := []Entry{{Key: "my.files"}, {Key: "my_files"}, {Key: "a b"}, {Key: "..."}, {Key: "a_b"}, {Key: "my_files"}}
	got := strings.Join(uniqueNames(es), " ")
	if want := "my_files_2 my_files a_b_2 server a_b my_files_3"; got != want {
		t.Errorf("names = %q, want %q", got, want)
	}
}

// --replace-client leaves one gateway entry, keeps the other keys, and
// backs the file up first.
func TestReplaceClient(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			w, res := imported(t, c.Name)
			originals := map[string][]byte{}
			for _, f := range res.Files {
				originals[f], _ = os.ReadFile(f)
			}
			cfgPath := filepath.Join(w.home, "gw.yaml")
			now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
			backups, err := ReplaceClient(res, w.exe, cfgPath, now)
			if err != nil {
				t.Fatal(err)
			}
			if len(backups) != len(res.Files) {
				t.Fatalf("backups %v for files %v", backups, res.Files)
			}
			for i, f := range res.Files {
				if backups[i] != f+".bak-20261123T100000Z" {
					t.Errorf("backup %q", backups[i])
				}
				b, _ := os.ReadFile(backups[i])
				if !bytes.Equal(b, originals[f]) {
					t.Errorf("backup of %s differs from the original", f)
				}
			}
			// Imported again: nothing but the gateway, which is skipped.
			again, err := Import(w.options(c.Name))
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Entries) != 0 || len(again.Skipped) != 1 || again.Skipped[0].Entry.Key != GatewayEntry {
				t.Errorf("after replace: entries %+v, skipped %+v", again.Entries, again.Skipped)
			}
			first, _ := os.ReadFile(res.Files[0])
			keep := map[string]string{"claude-desktop": "globalShortcut", "claude-code": "/some/other/project", "vscode": "perplexity-key", "codex": "[profiles.fast]"}[c.Name]
			if keep != "" && !bytes.Contains(first, []byte(keep)) {
				t.Errorf("%s lost %q:\n%s", res.Files[0], keep, first)
			}
			// The entry says "type": "stdio" where the client's entries have a type.
			if !c.TOML {
				var top map[string]any
				if err := json.Unmarshal(first, &top); err != nil {
					t.Fatal(err)
				}
				servers, _ := top[c.ServersKey].(map[string]any)
				entry, _ := servers[GatewayEntry].(map[string]any)
				if typ, want := entry["type"], map[bool]any{true: "stdio"}[c.Typed]; typ != want {
					t.Errorf("the gateway entry's type is %v, want %v: %v", typ, want, entry)
				}
			}
			// A second replace in the same second must not overwrite the backup.
			if _, err := ReplaceClient(again, w.exe, cfgPath, now); err == nil {
				t.Error("a second backup with the same name was allowed")
			}
		})
	}
}

// --replace-client on a client file that is a symbolic link (a dotfiles
// repository linked into place) writes through the link: the link stays a
// link, its target gets the gateway entry, and the backup is the old text.
// So does WriteConfig with force, for the gateway's own file.
func TestReplaceClientThroughSymlink(t *testing.T) {
	w := newWorld(t)
	w.place(t, "claude-desktop")
	link := filepath.Join(w.home, ".config", "Claude", "claude_desktop_config.json")
	target := filepath.Join(w.home, "dotfiles", "claude.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if _, err := os.Stat(link); err != nil && testutil.Wine {
		t.Skipf("the symbolic link made does not resolve (Wine 8.0 writes the Windows path into a Unix link): %v", err)
	}
	original, _ := os.ReadFile(target)
	res, err := Import(w.options("claude-desktop"))
	if err != nil {
		t.Fatal(err)
	}
	backups, err := ReplaceClient(res, w.exe, filepath.Join(w.home, "gw.yaml"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link: %v %v", link, fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); !bytes.Contains(b, []byte(`"`+GatewayEntry+`"`)) || bytes.Equal(b, original) {
		t.Errorf("the link's target was not rewritten:\n%s", b)
	}
	if b, _ := os.ReadFile(backups[0]); !bytes.Equal(b, original) {
		t.Errorf("backup %s differs from the original", backups[0])
	}

	cfgTarget := filepath.Join(w.home, "dotfiles", "gw.yaml")
	cfgLink := filepath.Join(w.home, "gw-link.yaml")
	if err := os.WriteFile(cfgTarget, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cfgTarget, cfgLink); err != nil {
		t.Fatal(err)
	}
	if err := WriteConfig(cfgLink, []byte("new"), true); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(cfgLink); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a link", cfgLink)
	}
	if b, _ := os.ReadFile(cfgTarget); string(b) != "new" {
		t.Errorf("WriteConfig through a link: the target holds %q", b)
	}
}

// A client file's server entries are bounded: past 4 MiB of them import
// fails at once with an error that says so, before it parses an entry.
// History around them (Claude Code's ~/.claude.json) does not count.
func TestImportBounded(t *testing.T) {
	w := newWorld(t)
	var b strings.Builder
	b.WriteString(`{"history": "` + strings.Repeat("h", 5<<20) + `", "mcpServers": {`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%d": {"command": "npx", "args": ["-y", "p%d"]}`, i, i)
	}
	b.WriteString("}}")
	small := filepath.Join(w.dir, "small.json")
	if err := os.WriteFile(small, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := Import(w.options(small)); err != nil || len(res.Entries) != 50 {
		t.Fatalf("5 MiB of history and 50 servers: %v", err)
	}

	b.Reset()
	b.WriteString(`{"mcpServers": {`)
	for i := range 40000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%d": {"command": "npx", "args": ["-y", "p%d", "%s"]}`, i, i, strings.Repeat("x", 100))
	}
	b.WriteString("}}")
	big := filepath.Join(w.dir, "big.json")
	if err := os.WriteFile(big, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Import(w.options(big))
	if err == nil || !strings.Contains(err.Error(), "big.json: mcpServers: the server entries take 6.0 MiB") || !strings.Contains(err.Error(), "import reads at most 4.0 MiB of them") {
		t.Errorf("5 MiB of servers: %v", err)
	}
	toml := filepath.Join(w.dir, "config.toml")
	if err := os.WriteFile(toml, []byte("# "+strings.Repeat("c", 5<<20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(w.options(toml)); err == nil || !strings.Contains(err.Error(), "import reads at most 4.0 MiB of a TOML file") {
		t.Errorf("a 5 MiB config.toml: %v", err)
	}
}

// Missing files and bad syntax are clear errors naming the file and line.
func TestErrors(t *testing.T) {
	w := newWorld(t)
	if _, err := Import(w.options("claude-desktop")); err == nil || !strings.Contains(err.Error(), "no Claude Desktop configuration found") {
		t.Errorf("missing: %v", err)
	}
	if _, err := Import(w.options(filepath.Join(w.dir, "nope.json"))); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing path: %v", err)
	}
	// A name that is neither a client nor a file lists the clients.
	if _, err := Import(w.options("claude")); err == nil || !strings.Contains(err.Error(), `"claude" is not a client`) || !strings.Contains(err.Error(), "claude-desktop, claude-code, cursor, vscode, windsurf, codex or gemini") {
		t.Errorf("unknown client: %v", err)
	}
	cases := map[string]struct{ data, want string }{
		"bad.json":   {"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n  }\n}\n", "bad.json:3: invalid JSON"},
		"args.json":  {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": \"-y\"}}}", "mcpServers.a.args: must be a list of strings"},
		"list.json":  {"[1]", "must be a JSON object"},
		"bad.toml":   {"[mcp_servers.a]\ncommand = \"x\"\nargs = [\n", "bad.toml:3: invalid TOML"},
		"map.json":   {"{\"mcpServers\": [1]}", "mcpServers: must be a mapping"},
		"typed.toml": {"[mcp_servers.a]\ncommand = 3\n", "invalid TOML"},
	}
	for name, c := range cases {
		p := filepath.Join(w.dir, name)
		if err := os.WriteFile(p, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Import(w.options(p))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
}

func TestWriteConfigRefusesOverwrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "gw.yaml")
	if err := WriteConfig(p, []byte("a"), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteConfig(p, []byte("b"), false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("overwrite without force: %v", err)
	}
	if err := WriteConfig(p, []byte("c"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "c" {
		t.Errorf("content %q", b)
	}
}

func TestStripJSONC(t *testing.T) {
	for in, want := range map[string]string{
		"{\"a\": 1, // c\n}":        "{\"a\": 1      \n}",
		"[1, 2,]":                   "[1, 2 ]",
		"{/* x\ny */\"u\": \"//\"}": "{    \n    \"u\": \"//\"}",
		"{,}":                       "{,}",
		"[1,,]":                     "[1,,]",
		`{"a": "\",}"}`:             `{"a": "\",}"}`,
	} {
		if got := string(stripJSONC([]byte(in))); got != want {
			t.Errorf("stripJSONC(%q) = %q, want %q", in, got, want)
		}
	}
}

// A path is read in its client's format, told by its name or contents.
func TestDetect(t *testing.T) {
	w := newWorld(t)
	for name, c := range map[string]struct {
		data   string
		client string
		names  string
	}{
		"settings.json":    {"{\n // user settings\n \"editor.fontSize\": 14,\n \"mcp\": {\"servers\": {\"a\": {\"command\": \"x\"}}},\n}", "vscode", "a"},
		"servers.json":     {`{"servers": {"b": {"type": "stdio", "command": "x"}}}`, "vscode", "b"},
		"any.json":         {`{"mcpServers": {"c": {"command": "x"}}}`, "file", "c"},
		"cfg.toml":         {"[mcp_servers.d]\ncommand = \"x\"\n", "codex", "d"},
		".vscode/mcp.json": {`{"servers": {"e": {"command": "x", "args": ["${workspaceFolder}"]}}}`, "vscode", "e"},
	} {
		p := filepath.Join(w.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := Import(w.options(p))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var names []string
		for _, e := range res.Entries {
			names = append(names, e.Name)
		}
		if res.Client.Name != c.client || strings.Join(names, " ") != c.names {
			t.Errorf("%s: client %s, servers %v; want %s, %s", name, res.Client.Name, names, c.client, c.names)
		}
		if a := res.Entries[0].Server.Args; len(a) > 0 && a[0] != w.dir {
			t.Errorf("%s: ${workspaceFolder} became %q, want %q", name, a[0], w.dir)
		}
	}
}

// An entry the gateway could not load is left out with the reason; the
// others are imported.
func TestUnloadableEntrySkipped(t *testing.T) {
	w := newWorld(t)
	p := filepath.Join(w.dir, "mixed.json")
	data := `{"mcpServers": {"ok": {"command": "x"}, "ftp": {"url": "ftp://files.example.com"}, "empty": {"args": ["a"]}}}`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Import(w.options(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 1 || res.Entries[0].Name != "ok" || len(res.Skipped) != 2 {
		t.Fatalf("entries %+v, skipped %+v", res.Entries, res.Skipped)
	}
	for _, s := range res.Skipped {
		if !strings.HasPrefix(s.Why, "url: ") && !strings.Contains(s.Why, "needs command") {
			t.Errorf("%s: reason %q", s.Entry.Key, s.Why)
		}
	}
	loadYAML(t, res.YAML())
}

// The gateway entry goes into the user-level file even when its servers
// all came from the project's file, which is emptied.
func TestReplaceClientIntoUserFile(t *testing.T) {
	w := newWorld(t)
	user := filepath.Join(w.home, ".cursor", "mcp.json")
	project := filepath.Join(w.dir, ".cursor", "mcp.json")
	for p, data := range map[string]string{user: `{"other": 1}`, project: `{"mcpServers": {"a": {"command": "x"}}}`} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Import(w.options("cursor"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReplaceClient(res, w.exe, "/gw.yaml", time.Now()); err != nil {
		t.Fatal(err)
	}
	var u, p struct {
		Other      int
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	ub, _ := os.ReadFile(user)
	pb, _ := os.ReadFile(project)
	if json.Unmarshal(ub, &u) != nil || json.Unmarshal(pb, &p) != nil {
		t.Fatalf("not JSON:\n%s\n%s", ub, pb)
	}
	if u.Other != 1 || len(u.MCPServers) != 1 || u.MCPServers[GatewayEntry]["command"] != w.exe || p.MCPServers == nil || len(p.MCPServers) != 0 {
		t.Errorf("user file:\n%s\nproject file:\n%s", ub, pb)
	}
}

// A client secret written in the client's file is not copied into the
// YAML: it becomes a ${VAR} reference, with a note naming the variable.
func TestOAuthSecretNotCopied(t *testing.T) {
	_, res := imported(t, "cursor")
	y := string(res.YAML())
	if strings.Contains(y, "s3cr3t-in-the-file") {
		t.Fatalf("the literal secret was copied:\n%s", y)
	}
	for _, e := range res.Entries {
		if e.Key == "pipes" {
			if e.Server.OAuth.ClientSecret != "${PIPES_CLIENT_SECRET}" || !slices.ContainsFunc(e.Notes, func(n string) bool { return strings.Contains(n, "set PIPES_CLIENT_SECRET") }) {
				t.Errorf("pipes: secret %q, notes %q", e.Server.OAuth.ClientSecret, e.Notes)
			}
			return
		}
	}
	t.Fatal("pipes not imported")
}

// A redirect URI the gateway cannot listen on costs that setting, with a
// note, and not the server; one it can is carried over.
func TestOAuthRedirectURI(t *testing.T) {
	w := newWorld(t)
	p := filepath.Join(w.dir, "settings.json")
	data := `{"mcpServers": {
  "good": {"httpUrl": "https://a.example.com/mcp", "oauth": {"clientId": "a", "redirectUri": "http://127.0.0.1:7777/cb", "tokenParamName": "t"}},
  "web": {"httpUrl": "https://b.example.com/mcp", "oauth": {"clientId": "b", "redirectUri": "https://b.example.com/cb"}}
}}`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Import(w.options(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 2 || len(res.Skipped) != 0 {
		t.Fatalf("entries %d, skipped %v", len(res.Entries), res.Skipped)
	}
	good, web := res.Entries[0], res.Entries[1]
	if good.Server.OAuth.RedirectURI != "http://127.0.0.1:7777/cb" || good.Server.OAuth.ClientID != "a" || !slices.Contains(good.Notes, "oauth.tokenParamName not carried over: a Gemini CLI setting; the gateway discovers the endpoints") {
		t.Errorf("good: %+v, notes %q", good.Server.OAuth, good.Notes)
	}
	if web.Server.OAuth.RedirectURI != "" || web.Server.OAuth.ClientID != "b" || !slices.ContainsFunc(web.Notes, func(n string) bool { return strings.Contains(n, "redirect URI") }) {
		t.Errorf("web: %+v, notes %q", web.Server.OAuth, web.Notes)
	}
	loadYAML(t, res.YAML())
}

// A relative command or cwd in a project file is the project's, made
// absolute; in a user's file it is kept, with a note on how the gateway
// reads it (from its own file's directory).
func TestRelativePathsImported(t *testing.T) {
	root := t.TempDir()
	servers := `{"mcpServers": {"x": {"command": "./bin/x", "cwd": "tools"}, "y": {"command": "node", "args": ["./y.js"]}}}`
	project := filepath.Join(root, "proj", ".cursor", "mcp.json")
	user := filepath.Join(root, "claude_desktop_config.json")
	for _, p := range []string{project, user} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(servers), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Import(Options{From: project, Home: root, Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	x, y := res.Entries[0].Server, res.Entries[1].Server
	if want := filepath.Join(root, "proj", "tools"); x.Cwd != want || x.Command != filepath.Join(want, "bin", "x") {
		t.Errorf("project file: cwd %q command %q, want them under %s", x.Cwd, x.Command, want)
	}
	if y.Command != "node" || y.Args[0] != "./y.js" {
		t.Errorf("project file: a bare command or an argument changed: %+v", y)
	}
	res, err = Import(Options{From: user, Home: root, Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	if x := res.Entries[0]; x.Server.Command != "./bin/x" || x.Server.Cwd != "tools" || !strings.Contains(strings.Join(x.Notes, "\n"), "a relative path") {
		t.Errorf("user file: %+v, notes %q", x.Server, x.Notes)
	}
	if y := res.Entries[1]; len(y.Notes) != 0 {
		t.Errorf("user file: notes for a bare command: %q", y.Notes)
	}
}

// An imported local server is confined best_effort with the existing
// paths among its arguments and env values in read and write (a
// PATH-like list for its entries that exist); a server with a path import
// cannot grant, one that does not exist yet or that would expose the home
// or the gateway's own files, gets mode off with a comment saying why,
// since best_effort without it would break the server; a remote one gets
// no sandbox; the YAML loads with the sandbox as written; and NoSandbox
// leaves every server without one.
func TestImportSandbox(t *testing.T) {
	w := newWorld(t)
	notes := filepath.Join(w.home, "notes")
	db := filepath.Join(w.home, "data", "app.db")
	memory := filepath.Join(w.home, ".memory.jsonl")
	own := filepath.Join(w.home, ".config", "mcp-gateway")
	for _, d := range []string{notes, filepath.Dir(db), own} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{db, memory} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	esc := func(p string) string { b, _ := json.Marshal(p); return string(b) }
	missing := filepath.Join(w.home, "missing")
	fresh := filepath.Join(w.home, "fresh.jsonl")
	file := filepath.Join(w.dir, "servers.json")
	data := `{"mcpServers": {
  "notes": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", ` + esc(notes) + `]},
  "db": {"command": "uvx", "args": ["mcp-server-sqlite", ` + esc("--db-path="+db) + `]},
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": ` + esc(memory) + `, "NODE_PATH": ` + esc(notes+string(filepath.ListSeparator)+missing) + `, "LOG": "$HOME/x"}},
  "fresh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": ` + esc(fresh) + `}},
  "gone": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", ` + esc(notes) + `, ` + esc(missing) + `, ` + esc(missing) + `]},
  "home": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"], "env": {"ROOT": ` + esc(w.home) + `}},
  "own": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", ` + esc(own) + `]},
  "remote": {"url": "https://example.com/mcp"}
}}`
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := w.options(file)
	res, err := Import(opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadYAML(t, res.YAML())
	got := map[string]config.Sandbox{}
	for _, s := range cfg.Servers {
		got[s.Name] = s.Sandbox
	}
	off := config.Sandbox{} // mode off loads as the zero block; its Entry has mode off (below)
	want := map[string]config.Sandbox{
		"notes":  {Mode: config.SandboxBestEffort, Read: []string{notes}, Write: []string{notes}},
		"db":     {Mode: config.SandboxBestEffort, Read: []string{db}, Write: []string{db}},
		"memory": {Mode: config.SandboxBestEffort, Read: []string{memory, notes}, Write: []string{memory, notes}},
		"fresh":  off,
		"gone":   off,
		"home":   off,
		"own":    off,
		"remote": {},
	}
	for name, sb := range want {
		if g := got[name]; g.Mode != sb.Mode || !slices.Equal(g.Read, sb.Read) || !slices.Equal(g.Write, sb.Write) {
			t.Errorf("%s: loaded sandbox %+v, want %+v\n%s", name, g, sb, res.YAML())
		}
	}
	why := map[string]string{
		"fresh": "sandbox off: MEMORY_FILE_PATH names " + fresh + ", which does not exist yet: create it, then set mode: best_effort with it in read and write",
		"gone":  "sandbox off: its argument " + missing + ", which does not exist yet",
		"home":  "sandbox off: ROOT names " + w.home + ", which would expose the whole home directory",
		"own":   "sandbox off: its argument " + own + ", which would expose the gateway's",
	}
	for _, e := range res.Entries {
		notes := strings.Join(e.Notes, "\n")
		if w, ok := why[e.Name]; ok != strings.Contains(notes, "sandbox off") || !strings.Contains(notes, w) {
			t.Errorf("%s: notes %q, want one with %q", e.Name, e.Notes, w)
		}
		if n := strings.Count(notes, "sandbox off"); n > 1 {
			t.Errorf("%s: %d sandbox notes for one path: %q", e.Name, n, e.Notes)
		}
		if _, ok := why[e.Name]; ok != (e.Server.Sandbox.Mode == config.SandboxOff) {
			t.Errorf("%s: sandbox mode %q", e.Name, e.Server.Sandbox.Mode)
		}
	}
	if y := string(res.YAML()); !strings.Contains(y, "# sandbox off: MEMORY_FILE_PATH names "+fresh) {
		t.Errorf("the YAML has no comment on the server saying why its sandbox is off:\n%s", y)
	}

	opts.NoSandbox = true
	if res, err = Import(opts); err != nil {
		t.Fatal(err)
	}
	if y := res.YAML(); bytes.Contains(y, []byte("sandbox")) {
		t.Errorf("NoSandbox: the YAML has a sandbox:\n%s", y)
	}
}
