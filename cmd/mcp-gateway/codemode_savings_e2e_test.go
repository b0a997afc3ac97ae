package main

// What code mode saves a model, measured over the real npm servers the
// tests use (server-memory, server-filesystem, server-everything) behind
// the real binary: each task done the direct way, one tool call per model
// round trip with the whole tool list; the lazy way, the same calls
// through call_tool after find_tools; and the code-mode way, the lazy
// list, the TypeScript declarations the model asks find_tools for, and
// one run_script. docs/code-mode.md ("Measured savings") has the table.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// savingsWay is one way of doing the tasks: a gateway of its own, with
// its own servers and their state (a memory file, a directory).
type savingsWay struct {
	t       *testing.T
	cs      *mcp.ClientSession
	root    string // the filesystem server's directory
	mem     string // the memory server's file
	listing int    // bytes of tools/list: what the model reads first
}

// startWay starts the binary in tools mode mode (full: every tool listed;
// lazy: the meta tools, and run_script when codeMode) over the three npm
// servers.
func startWay(t *testing.T, npmRoot, mode string, codeMode bool) *savingsWay {
	t.Helper()
	dir := t.TempDir()
	// The filesystem server answers with real paths: resolve the
	// temporary directory's symbolic links (macOS's /var) first.
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := &savingsWay{t: t, root: filepath.Join(dir, "files"), mem: filepath.Join(dir, "memory.jsonl")}
	if err := os.Mkdir(w.root, 0o755); err != nil {
		t.Fatal(err)
	}
	mem := nodeServer(npmRoot, "memory", "server-memory")
	mem.Env = map[string]string{"MEMORY_FILE_PATH": w.mem}
	cfg, err := json.Marshal(map[string]any{
		"gateway": map[string]any{"startup_timeout_ms": 25000, "first_start_wait_ms": 25000, "answer_tools": false, "tools_mode": mode, "code_mode": codeMode},
		"servers": []beServer{mem, nodeServer(npmRoot, "filesystem", "server-filesystem", w.root), nodeServer(npmRoot, "everything", "server-everything", "stdio")},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.cs = startSDK(t, writeTemp(t, "config.yaml", string(cfg)), nil)
	list, err := w.cs.ListTools(beCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.listing = len(compactJSON(t, list))
	return w
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// compactJSON is v as JSON without HTML escaping, as a server writes it.
func compactJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b.Bytes())
}

// turns records what one way of doing a task cost the model: each tool
// call is a round trip whose result the model reads.
type turns struct {
	w     *savingsWay
	reads []int         // bytes of each result the model read, in order
	wall  time.Duration // the tool calls' time, summed
	// meta: a backend tool is called through gateway.call_tool (lazy
	// mode without code mode).
	meta bool
}

// call calls a tool as a model's client does and returns what the model
// (or a script: the same rule) gets from it: the structured content when
// there is one, else the text. The model reads the result's content: its
// text (and any other content as JSON).
func (tr *turns) call(name string, args map[string]any) any {
	t := tr.w.t
	t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if tr.meta && !strings.HasPrefix(name, "gateway.") {
		params = &mcp.CallToolParams{Name: "gateway.call_tool", Arguments: obj("name", name, "arguments", args)}
	}
	start := time.Now()
	res, err := tr.w.cs.CallTool(beCtx(t), params)
	tr.wall += time.Since(start)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var text []string
	read := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
			read += len(tc.Text)
		} else {
			read += len(compactJSON(t, c))
		}
	}
	tr.reads = append(tr.reads, read)
	if res.IsError {
		t.Fatalf("%s %v: %s", name, args, strings.Join(text, "\n"))
	}
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	return strings.Join(text, "\n")
}

// read is the bytes the model read: the tool list and every result.
func (tr *turns) read() int {
	n := tr.w.listing
	for _, r := range tr.reads {
		n += r
	}
	return n
}

// context is the bytes the model's turns read in all, each turn reading
// the tool list and every result before it: the round trips', and the
// final answer's.
func (tr *turns) context() int {
	n, sum := 0, tr.w.listing
	for _, r := range tr.reads {
		n += sum
		sum += r
	}
	return n + sum
}

// savingsTask is one multi-step task, written both ways: direct makes the
// calls a model would, one per round trip, and returns the answer it would
// give (the direct and the lazy way); find are the searches the model
// makes before it calls (lazy) or writes script (code mode, format ts),
// which does the same and returns the same answer. setup puts what the
// task starts from in a way's directory.
type savingsTask struct {
	name   string
	setup  func(root string) map[string]string // files to write, by path under root
	direct func(tr *turns, root string) any
	find   []map[string]any
	script string // ROOT stands for the way's directory, with forward slashes
}

// TestCodeModeSavings runs each task three ways over the real npm
// servers: direct (every tool listed, one call per round trip), lazy (the
// meta tools listed, find_tools in JSON, describe_tool for a tool found
// without its schema, call_tool per call) and code mode (the lazy list
// with run_script, find_tools in TypeScript, one run_script). It logs,
// per task, the model's round trips, the bytes it reads (tool list plus
// results; and the context its turns re-read), and the direct calls' wall
// time against the script's. Every way must give the same answer and
// leave the same state (the memory file, the directory), and on the
// median task code mode must read at most half the bytes direct does.
func TestCodeModeSavings(t *testing.T) {
	npmRoot := npmPeers(t)
	direct, lazy, code := startWay(t, npmRoot, "full", false), startWay(t, npmRoot, "lazy", false), startWay(t, npmRoot, "lazy", true)
	if !slices.Contains(sdkToolNames(t, code.cs), "gateway.run_script") {
		t.Fatalf("code mode lists no gateway.run_script: %v", sdkToolNames(t, code.cs))
	}

	type row struct {
		name    string
		d, l, c *turns
	}
	var rows []row
	for _, task := range savingsTasks() {
		for _, w := range []*savingsWay{direct, lazy, code} {
			for p, content := range task.setup(w.root) {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(w.root, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(w.root, p), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		used := map[string]bool{}
		for _, m := range calledTool.FindAllStringSubmatch(task.script, -1) {
			used[m[1]] = true
		}

		d := &turns{w: direct}
		want := normalize(t, task.direct(d, direct.root), direct.root)

		// Lazy: the same searches in JSON, and the schema of each tool
		// found without one.
		l := &turns{w: lazy, meta: true}
		schemas := map[string]bool{}
		for _, args := range task.find {
			var found struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(l.call("gateway.find_tools", obj("query", args["query"], "limit", args["limit"])).(string)), &found); err != nil {
				t.Fatal(err)
			}
			for _, f := range found.Tools {
				schemas[f.Name] = schemas[f.Name] || len(f.InputSchema) > 0
			}
		}
		for _, name := range slices.Sorted(maps.Keys(used)) {
			if !schemas[name] {
				l.call("gateway.describe_tool", obj("name", name))
			}
		}
		l.wall = 0
		if got := normalize(t, task.direct(l, lazy.root), lazy.root); got != want {
			t.Errorf("%s: lazy mode's answer\n%s\ndirect\n%s", task.name, got, want)
		}

		c := &turns{w: code}
		var decls strings.Builder
		for _, args := range task.find {
			decls.WriteString(c.call("gateway.find_tools", args).(string))
		}
		// The model calls only what it was shown.
		for name := range used {
			if !strings.Contains(decls.String(), "\n  \""+name+"\"(args: ") {
				t.Errorf("%s: the script calls %s, which its searches did not declare:\n%s", task.name, name, decls.String())
			}
		}
		c.wall = 0 // the script's time is run_script's, not the searches'
		src := strings.ReplaceAll(task.script, "ROOT", filepath.ToSlash(code.root))
		out, ok := c.call("gateway.run_script", map[string]any{"script": src}).(map[string]any)
		if !ok {
			t.Fatalf("%s: run_script's result has no structured content", task.name)
		}
		if got := normalize(t, out["result"], code.root); got != want {
			t.Errorf("%s: the script's answer\n%s\ndirect\n%s", task.name, got, want)
		}
		ds := stateOf(t, direct)
		for _, w := range []*savingsWay{lazy, code} {
			if s := stateOf(t, w); s != ds {
				t.Errorf("%s: the state after the %s way\n%s\nafter the direct way\n%s", task.name, map[*savingsWay]string{lazy: "lazy", code: "code-mode"}[w], s, ds)
			}
		}
		rows = append(rows, row{task.name, d, l, c})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "tool list: direct (tools_mode full) %d B, lazy %d B, code mode (lazy with run_script) %d B\n", direct.listing, lazy.listing, code.listing)
	b.WriteString("| task | round trips: direct / lazy / code | bytes read: direct / lazy / code | code ÷ direct | code ÷ lazy | context re-read: direct / lazy / code | time: direct calls / script |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	var ratios []float64
	for _, r := range rows {
		ratio := float64(r.c.read()) / float64(r.d.read())
		fmt.Fprintf(&b, "| %s | %d / %d / %d | %d / %d / %d | %.2f | %.2f | %d / %d / %d | %s / %s |\n", r.name,
			len(r.d.reads), len(r.l.reads), len(r.c.reads), r.d.read(), r.l.read(), r.c.read(), ratio, float64(r.c.read())/float64(r.l.read()),
			r.d.context(), r.l.context(), r.c.context(), r.d.wall.Round(100*time.Microsecond), r.c.wall.Round(100*time.Microsecond))
		ratios = append(ratios, ratio)
	}
	median := medianOf(ratios)
	fmt.Fprintf(&b, "median code ÷ direct %.2f\n", median)
	t.Logf("code mode savings over %d tasks:\n%s", len(rows), b.String())
	if len(rows) < 8 {
		t.Errorf("%d tasks, want at least 8", len(rows))
	}
	if median > 0.5 {
		t.Errorf("median bytes ratio %.2f, want at most 0.5", median)
	}
}

func medianOf(v []float64) float64 {
	v = slices.Sorted(slices.Values(v))
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// normalize is an answer as canonical JSON, with the way's directory
// written ROOT.
func normalize(t *testing.T, v any, root string) string {
	t.Helper()
	return strings.ReplaceAll(string(compactJSON(t, v)), root, "ROOT")
}

// stateOf is what the tasks have left: the memory file's entities and
// relations, sorted, and every file under the directory with its
// content.
func stateOf(t *testing.T, w *savingsWay) string {
	t.Helper()
	var lines []string
	if raw, err := os.ReadFile(w.mem); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if l != "" {
				lines = append(lines, "memory: "+l)
			}
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	err := filepath.WalkDir(w.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.root, p)
		if d.IsDir() {
			lines = append(lines, "dir: "+filepath.ToSlash(rel))
			return nil
		}
		raw, err := os.ReadFile(p)
		lines = append(lines, fmt.Sprintf("file: %s %q", filepath.ToSlash(rel), raw))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// findTS is a find_tools call for the declarations of the tools a task
// needs.
func findTS(query string, limit int) map[string]any {
	return map[string]any{"query": query, "limit": limit, "format": "ts"}
}

func obj(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// content is a filesystem tool's text: its structured content's content.
func content(v any) string {
	s, _ := v.(map[string]any)["content"].(string)
	return s
}

var (
	calledTool = regexp.MustCompile(`tools\["([^"]+)"\]`)
)

func savingsTasks() []savingsTask {
	people := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara"}
	relations := [][3]string{{"Ada", "inspired", "Alan"}, {"Alan", "corresponded with", "Grace"}, {"Grace", "mentored", "Barbara"}, {"Edsger", "debated", "Barbara"}}
	noFiles := func(string) map[string]string { return nil }
	return []savingsTask{{
		name:  "five entities, four relations, read back",
		setup: noFiles,
		direct: func(tr *turns, _ string) any {
			var entities []any
			for _, p := range people {
				entities = append(entities, obj("name", p, "entityType", "person", "observations", []any{"computer scientist"}))
			}
			tr.call("memory.create_entities", obj("entities", entities))
			var rels []any
			for _, r := range relations {
				rels = append(rels, obj("from", r[0], "relationType", r[1], "to", r[2]))
			}
			tr.call("memory.create_relations", obj("relations", rels))
			g := tr.call("memory.read_graph", obj()).(map[string]any)
			var out []string
			for _, r := range g["relations"].([]any) {
				r := r.(map[string]any)
				out = append(out, fmt.Sprintf("%s %s %s", r["from"], r["relationType"], r["to"]))
			}
			return obj("entities", len(g["entities"].([]any)), "relations", out)
		},
		find: []map[string]any{findTS("create entities and relations in the knowledge graph, read the graph", 4)},
		script: `const people = ["Ada", "Grace", "Alan", "Edsger", "Barbara"];
await tools["memory.create_entities"]({ entities: people.map((name) => ({ name, entityType: "person", observations: ["computer scientist"] })) });
await tools["memory.create_relations"]({ relations: [
  { from: "Ada", relationType: "inspired", to: "Alan" },
  { from: "Alan", relationType: "corresponded with", to: "Grace" },
  { from: "Grace", relationType: "mentored", to: "Barbara" },
  { from: "Edsger", relationType: "debated", to: "Barbara" },
] });
const g = await tools["memory.read_graph"]({});
return { entities: g.entities.length, relations: g.relations.map((r) => r.from + " " + r.relationType + " " + r.to) };`,
	}, {
		name:  "observations on three entities, then search",
		setup: noFiles,
		direct: func(tr *turns, _ string) any {
			var obs []any
			for _, o := range [][2]string{{"Ada", "drinks tea"}, {"Alan", "runs marathons"}, {"Grace", "drinks tea"}} {
				obs = append(obs, obj("entityName", o[0], "contents", []any{o[1]}))
			}
			tr.call("memory.add_observations", obj("observations", obs))
			found := tr.call("memory.search_nodes", obj("query", "tea")).(map[string]any)
			var names []string
			for _, e := range found["entities"].([]any) {
				names = append(names, e.(map[string]any)["name"].(string))
			}
			return names
		},
		find: []map[string]any{findTS("add observations to entities, search nodes", 2)},
		script: `await tools["memory.add_observations"]({ observations: [["Ada", "drinks tea"], ["Alan", "runs marathons"], ["Grace", "drinks tea"]]
  .map(([entityName, note]) => ({ entityName, contents: [note] })) });
const found = await tools["memory.search_nodes"]({ query: "tea" });
return found.entities.map((e) => e.name);`,
	}, {
		name:  "remove a relation and an observation, open two nodes",
		setup: noFiles,
		direct: func(tr *turns, _ string) any {
			tr.call("memory.delete_relations", obj("relations", []any{obj("from", "Edsger", "relationType", "debated", "to", "Barbara")}))
			tr.call("memory.delete_observations", obj("deletions", []any{obj("entityName", "Alan", "observations", []any{"runs marathons"})}))
			nodes := tr.call("memory.open_nodes", obj("names", []any{"Alan", "Barbara"})).(map[string]any)
			out := map[string]any{}
			for _, e := range nodes["entities"].([]any) {
				e := e.(map[string]any)
				out[e["name"].(string)] = e["observations"]
			}
			out["relations"] = len(nodes["relations"].([]any))
			return out
		},
		find: []map[string]any{findTS("delete relations and observations, open nodes", 4)},
		script: `await tools["memory.delete_relations"]({ relations: [{ from: "Edsger", relationType: "debated", to: "Barbara" }] });
await tools["memory.delete_observations"]({ deletions: [{ entityName: "Alan", observations: ["runs marathons"] }] });
const nodes = await tools["memory.open_nodes"]({ names: ["Alan", "Barbara"] });
const out = {};
for (const e of nodes.entities) out[e.name] = e.observations;
out.relations = nodes.relations.length;
return out;`,
	}, {
		name:  "write three files, list the directory",
		setup: noFiles,
		direct: func(tr *turns, root string) any {
			tr.call("filesystem.create_directory", obj("path", root+"/notes"))
			for i, topic := range []string{"alpha", "beta", "gamma"} {
				tr.call("filesystem.write_file", obj("path", fmt.Sprintf("%s/notes/%d-%s.md", root, i+1, topic), "content", "# "+topic+"\n\nNotes on "+topic+".\n"))
			}
			return content(tr.call("filesystem.list_directory", obj("path", root+"/notes")))
		},
		find: []map[string]any{findTS("create directory, write file, list directory", 3)},
		script: `await tools["filesystem.create_directory"]({ path: "ROOT/notes" });
const topics = ["alpha", "beta", "gamma"];
await Promise.all(topics.map((t, i) => tools["filesystem.write_file"]({ path: "ROOT/notes/" + (i + 1) + "-" + t + ".md", content: "# " + t + "\n\nNotes on " + t + ".\n" })));
return (await tools["filesystem.list_directory"]({ path: "ROOT/notes" })).content;`,
	}, {
		name: "search files, read the first line of each",
		setup: func(string) map[string]string {
			return map[string]string{
				"docs/guide.md": "# Guide\n" + strings.Repeat("The guide goes on.\n", 200), "docs/api.md": "# API\n" + strings.Repeat("Endpoints and more.\n", 200),
				"docs/faq.md": "# FAQ\n" + strings.Repeat("Questions, answers.\n", 200), "docs/logo.txt": "not markdown",
			}
		},
		direct: func(tr *turns, root string) any {
			found := content(tr.call("filesystem.search_files", obj("path", root+"/docs", "pattern", "*.md")))
			firsts := map[string]any{}
			for _, p := range strings.Split(strings.TrimSpace(found), "\n") {
				firsts[filepath.Base(p)] = content(tr.call("filesystem.read_text_file", obj("path", p, "head", 1)))
			}
			return firsts
		},
		find: []map[string]any{findTS("search files by pattern, read text file", 2)},
		script: `const found = (await tools["filesystem.search_files"]({ path: "ROOT/docs", pattern: "*.md" })).content.trim().split("\n");
const firsts = {};
for (const p of found) {
  firsts[p.split(/[\\/]/).pop()] = (await tools["filesystem.read_text_file"]({ path: p, head: 1 })).content;
}
return firsts;`,
	}, {
		name: "the last line of each CSV file",
		setup: func(string) map[string]string {
			rows := func(n int) string {
				var b strings.Builder
				for i := range n {
					fmt.Fprintf(&b, "%d,%d,%d\n", i, i*i, i*i*i)
				}
				return b.String()
			}
			return map[string]string{"data/a.csv": rows(100), "data/b.csv": rows(40), "data/c.csv": rows(250), "data/d.csv": rows(7), "data/readme.txt": "CSV files\n"}
		},
		direct: func(tr *turns, root string) any {
			list := content(tr.call("filesystem.list_directory", obj("path", root+"/data")))
			last := map[string]any{}
			for _, l := range strings.Split(list, "\n") {
				if name, ok := strings.CutPrefix(l, "[FILE] "); ok && strings.HasSuffix(name, ".csv") {
					last[name] = content(tr.call("filesystem.read_text_file", obj("path", root+"/data/"+name, "tail", 1)))
				}
			}
			return last
		},
		find: []map[string]any{findTS("list directory", 1), findTS("read text file", 1)},
		script: `const list = (await tools["filesystem.list_directory"]({ path: "ROOT/data" })).content.split("\n");
const files = list.filter((l) => l.startsWith("[FILE] ") && l.endsWith(".csv")).map((l) => l.slice(7));
const tails = await Promise.all(files.map((f) => tools["filesystem.read_text_file"]({ path: "ROOT/data/" + f, tail: 1 })));
const last = {};
files.forEach((f, i) => { last[f] = tails[i].content; });
return last;`,
	}, {
		name: "count the TODO lines in five source files",
		setup: func(string) map[string]string {
			files := map[string]string{}
			for i, n := range []int{3, 0, 7, 1, 4} {
				var b strings.Builder
				for line := range 120 {
					if line%17 == 5 && line/17 < n {
						fmt.Fprintf(&b, "\t// TODO(%d): handle case %d\n", i, line)
					} else {
						fmt.Fprintf(&b, "\tx%d := compute(%d, %d) // step %d of the pipeline\n", line, i, line, line)
					}
				}
				files[fmt.Sprintf("src/part%d.go", i)] = "package src\n\nfunc part() {\n" + b.String() + "}\n"
			}
			return files
		},
		direct: func(tr *turns, root string) any {
			found := strings.Split(strings.TrimSpace(content(tr.call("filesystem.search_files", obj("path", root+"/src", "pattern", "*.go")))), "\n")
			paths := make([]any, len(found))
			for i, p := range found {
				paths[i] = p
			}
			all := content(tr.call("filesystem.read_multiple_files", obj("paths", paths)))
			counts := map[string]any{}
			file := ""
			for _, l := range strings.Split(all, "\n") {
				if p, ok := strings.CutSuffix(l, ":"); ok && slices.Contains(found, p) {
					file = filepath.Base(p)
					counts[file] = 0
				} else if strings.Contains(l, "TODO") {
					counts[file] = counts[file].(int) + 1
				}
			}
			return counts
		},
		find: []map[string]any{findTS("search files by pattern, read multiple files", 2)},
		script: `const found = (await tools["filesystem.search_files"]({ path: "ROOT/src", pattern: "*.go" })).content.trim().split("\n");
const all = (await tools["filesystem.read_multiple_files"]({ paths: found })).content;
const counts = {};
let file = "";
for (const l of all.split("\n")) {
  if (l.endsWith(":") && found.includes(l.slice(0, -1))) {
    file = l.slice(0, -1).split(/[\\/]/).pop();
    counts[file] = 0;
  } else if (l.includes("TODO")) {
    counts[file]++;
  }
}
return counts;`,
	}, {
		name: "move the logs into an archive, list it",
		setup: func(string) map[string]string {
			return map[string]string{"work/run1.log": "run 1\n", "work/run2.log": "run 2\n", "work/keep.txt": "keep\n"}
		},
		direct: func(tr *turns, root string) any {
			tr.call("filesystem.create_directory", obj("path", root+"/work/archive"))
			list := content(tr.call("filesystem.list_directory", obj("path", root+"/work")))
			for _, l := range strings.Split(list, "\n") {
				if name, ok := strings.CutPrefix(l, "[FILE] "); ok && strings.HasSuffix(name, ".log") {
					tr.call("filesystem.move_file", obj("source", root+"/work/"+name, "destination", root+"/work/archive/"+name))
				}
			}
			return content(tr.call("filesystem.list_directory", obj("path", root+"/work/archive")))
		},
		find: []map[string]any{findTS("create directory, list directory, move file", 3)},
		script: `await tools["filesystem.create_directory"]({ path: "ROOT/work/archive" });
const list = (await tools["filesystem.list_directory"]({ path: "ROOT/work" })).content.split("\n");
for (const l of list) {
  if (l.startsWith("[FILE] ") && l.endsWith(".log")) {
    const name = l.slice(7);
    await tools["filesystem.move_file"]({ source: "ROOT/work/" + name, destination: "ROOT/work/archive/" + name });
  }
}
return (await tools["filesystem.list_directory"]({ path: "ROOT/work/archive" })).content;`,
	}, {
		name: "edit a setting in three files, read one back",
		setup: func(string) map[string]string {
			return map[string]string{"conf/a.ini": "name=a\nport=8080\n", "conf/b.ini": "name=b\nport=8080\n", "conf/c.ini": "name=c\nport=8080\n"}
		},
		direct: func(tr *turns, root string) any {
			for _, f := range []string{"a", "b", "c"} {
				tr.call("filesystem.edit_file", obj("path", root+"/conf/"+f+".ini", "edits", []any{obj("oldText", "port=8080", "newText", "port=9090")}))
			}
			return content(tr.call("filesystem.read_text_file", obj("path", root+"/conf/b.ini")))
		},
		find: []map[string]any{findTS("edit file, read text file", 2)},
		script: `for (const f of ["a", "b", "c"]) {
  await tools["filesystem.edit_file"]({ path: "ROOT/conf/" + f + ".ini", edits: [{ oldText: "port=8080", newText: "port=9090" }] });
}
return (await tools["filesystem.read_text_file"]({ path: "ROOT/conf/b.ini" })).content;`,
	}, {
		name:  "add six numbers with get-sum",
		setup: noFiles,
		direct: func(tr *turns, _ string) any {
			total := 3
			for _, n := range []int{14, 15, 92, 65, 35} {
				text := tr.call("everything.get-sum", obj("a", total, "b", n)).(string)
				total, _ = strconv.Atoi(text[strings.LastIndex(text, " ")+1 : len(text)-1])
			}
			return total
		},
		find: []map[string]any{findTS("sum of two numbers", 1)},
		script: `let total = 3;
for (const n of [14, 15, 92, 65, 35]) {
  const text = await tools["everything.get-sum"]({ a: total, b: n });
  total = Number(/(-?\d+)\.?$/.exec(text)[1]);
}
return total;`,
	}, {
		name: "a team file into the knowledge graph",
		setup: func(string) map[string]string {
			return map[string]string{"team.txt": "Lin: lead\nMo: backend\nNoor: frontend\nOla: design\n"}
		},
		direct: func(tr *turns, root string) any {
			text := content(tr.call("filesystem.read_text_file", obj("path", root+"/team.txt")))
			var entities, rels []any
			for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
				name, role, _ := strings.Cut(l, ": ")
				entities = append(entities, obj("name", name, "entityType", "person", "observations", []any{"role: " + role}))
				rels = append(rels, obj("from", name, "relationType", "member of", "to", "Team"))
			}
			entities = append(entities, obj("name", "Team", "entityType", "team", "observations", []any{}))
			tr.call("memory.create_entities", obj("entities", entities))
			tr.call("memory.create_relations", obj("relations", rels))
			found := tr.call("memory.search_nodes", obj("query", "role:")).(map[string]any)
			return len(found["entities"].([]any))
		},
		find: []map[string]any{findTS("read text file", 1), findTS("create entities and relations, search nodes", 4)},
		script: `const text = (await tools["filesystem.read_text_file"]({ path: "ROOT/team.txt" })).content;
const people = text.trim().split("\n").map((l) => l.split(": "));
await tools["memory.create_entities"]({ entities: [
  ...people.map(([name, role]) => ({ name, entityType: "person", observations: ["role: " + role] })),
  { name: "Team", entityType: "team", observations: [] },
] });
await tools["memory.create_relations"]({ relations: people.map(([name]) => ({ from: name, relationType: "member of", to: "Team" })) });
return (await tools["memory.search_nodes"]({ query: "role:" })).entities.length;`,
	}}
}
