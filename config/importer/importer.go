// Package importer reads the MCP server configuration of another MCP client
// (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex) and turns
// it into an equivalent mcp-gateway YAML; it can also rewrite that client's
// file to a single gateway entry. docs/clients.md describes each client's
// files and what is carried over.
package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// Options say what to import and how to find it.
type Options struct {
	// From is a client name (see Clients) or the path of a client's file;
	// a leading "~" is Home, as config.ExpandHome reads it.
	From string
	// Home is the user's home directory; Dir the project directory (the
	// working directory), for project files such as .mcp.json.
	Home, Dir string
	// GOOS selects the client's documented locations; "" means runtime.GOOS.
	GOOS string
	// Env looks up APPDATA, XDG_CONFIG_HOME and CODEX_HOME.
	Env func(string) (string, bool)
	// Self is this gateway: an entry that runs it (Self.Match's Gateway)
	// is never imported.
	Self config.Self
	// NoSandbox leaves the imported servers without a sandbox block; else
	// each local server gets best_effort with the paths in its arguments
	// and env, or off where one cannot be granted
	// (docs/sandbox.md#servers-added-by-import).
	NoSandbox bool
}

// Entry is one imported server.
type Entry struct {
	Name   string // sanitised and unique: the gateway's server name
	Key    string // the client's own name for it
	Source Source
	Server config.Server // Name, Command, Args, Env, Cwd, URL, Transport, Headers, OAuth, TimeoutMS, Enabled, Tools, Sandbox
	// Notes are what could not be carried over as it was, shown as comments.
	Notes []string
}

// Source locates an entry in a client's file.
type Source struct {
	File string
	Path []string // the JSON/TOML keys leading to the entry's map: ["mcpServers"], ["projects", "/p", "mcpServers"]
}

// String is "file: key.path".
func (s Source) String() string {
	return s.File + ": " + dotted(s.Path)
}

// Result is one import.
type Result struct {
	Client  *Client
	Files   []string // the files read, in order
	Entries []Entry
	// Skipped are the entries not imported: those that run this gateway
	// (config.Self.Match), and those the gateway could not load.
	Skipped []Skip
	// Maps are the server maps with entries, in the order read.
	Maps []Source

	// off are the names Claude Code turned off for this project in
	// ~/.claude.json: servers (disabledMcpServers) and .mcp.json servers
	// (disabledMcpjsonServers).
	off claudeCodeOff
}

// Skip is an entry that was not imported, and why.
type Skip struct {
	Entry Entry
	Why   string
}

// Error is a problem with a client's file: missing, unreadable, or not
// valid JSON/TOML. It names the file and, when known, the line.
type Error struct {
	File string
	Line int
	Msg  string
	Err  error // the cause, for errors.Is (os.ErrNotExist); may be nil
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Import reads the client's files and returns its servers. A client name
// reads every documented file that exists (and fails when none does); a
// path reads that file, its format told by its name and contents.
func Import(opts Options) (*Result, error) {
	if opts.Env == nil {
		opts.Env = func(string) (string, bool) { return "", false }
	}
	c, files := locate(opts)
	if c == nil {
		p := config.ExpandHome(opts.From, opts.Home)
		if !filepath.IsAbs(p) {
			p = filepath.Join(opts.Dir, p)
		}
		data, err := readFile(p)
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(opts.From, `/\.`) {
			return nil, fmt.Errorf("%q is not a client mcp-gateway knows (%s) nor a file", opts.From, ClientNames())
		}
		if err != nil {
			return nil, err
		}
		c = detect(p, data)
		r := &Result{Client: c}
		if err := r.read(opts, c, location{path: p, workspace: workspaceOf(p)}, data); err != nil {
			return nil, err
		}
		return r.finish(), nil
	}
	r := &Result{Client: c}
	for _, f := range files {
		data, err := readFile(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := r.read(opts, c, f, data); err != nil {
			return nil, err
		}
	}
	if len(r.Files) == 0 {
		var paths []string
		for _, f := range files {
			paths = append(paths, f.path)
		}
		return nil, fmt.Errorf("no %s configuration found (looked for %s)", c.Title, joinOr(paths))
	}
	return r.finish(), nil
}

// workspaceOf is the project directory of a project file given as a path
// (.vscode/mcp.json, .cursor/mcp.json, .mcp.json), or "".
func workspaceOf(p string) string {
	dir := filepath.Dir(p)
	switch {
	case filepath.Base(p) == ".mcp.json":
		return dir
	case slices.Contains([]string{".vscode", ".cursor", ".codex", ".gemini"}, filepath.Base(dir)):
		return filepath.Dir(dir)
	}
	return ""
}

// read parses one file and adds its entries.
func (r *Result) read(opts Options, c *Client, loc location, data []byte) error {
	var raws []rawEntry
	var err error
	if c.TOML {
		raws, err = parseTOML(loc.path, data)
	} else {
		raws, err = parseJSON(loc.path, data, c, opts.Dir)
	}
	if err != nil {
		return err
	}
	r.Files = append(r.Files, loc.path)
	if c == claudeCode {
		r.off.add(data, opts.Dir)
	}
	vars := varContext{client: c, home: opts.Home, workspace: loc.workspace}
	for _, raw := range raws {
		if !slices.ContainsFunc(r.Maps, func(s Source) bool { return s.File == raw.source.File && dotted(s.Path) == dotted(raw.source.Path) }) {
			r.Maps = append(r.Maps, raw.source)
		}
		e := raw.entry(vars)
		if !opts.NoSandbox {
			e.confine(opts)
		}
		if why := r.off.why(raw); why != "" && e.Server.Enabled {
			e.Server.Enabled = false
			e.Notes = append(e.Notes, why)
		}
		if m := opts.Self.Match(e.Server); m.Gateway {
			r.Skipped = append(r.Skipped, Skip{e, "runs mcp-gateway itself (" + m.Config + ")"})
			continue
		}
		if looksLikeGateway(e.Server) {
			e.Notes = append(e.Notes, "this runs an mcp-gateway other than this executable: one that leads back to this configuration is skipped at run time (docs/clients.md)")
		}
		r.Entries = append(r.Entries, e)
	}
	return nil
}

// looksLikeGateway reports whether the entry seems to run some mcp-gateway
// through a wrapper or another copy, which Self.Match cannot tell.
func looksLikeGateway(s config.Server) bool {
	if strings.TrimSuffix(strings.ToLower(filepath.Base(s.Command)), ".exe") == "mcp-gateway" {
		return true
	}
	// npx [-y] mcp-gateway[@version], or a scoped package .../mcp-gateway
	return slices.ContainsFunc(s.Args, func(a string) bool {
		base := a[strings.LastIndex(a, "/")+1:]
		return base == "mcp-gateway" || strings.HasPrefix(base, "mcp-gateway@")
	})
}

// finish gives every entry a unique gateway name and drops, into Skipped,
// the entries that config.Load would reject, so that the YAML always loads.
func (r *Result) finish() *Result {
	names := uniqueNames(r.Entries)
	for i := range r.Entries {
		r.Entries[i].Name, r.Entries[i].Server.Name = names[i], names[i]
	}
	if check(r.Entries) == nil {
		return r // the common case: one load for all
	}
	var kept []Entry
	for _, e := range r.Entries {
		if err := check([]Entry{e}); err != nil {
			r.Skipped = append(r.Skipped, Skip{e, err.Error()})
			continue
		}
		kept = append(kept, e)
	}
	r.Entries = kept
	return r
}

// check loads the entries' YAML with config.Load, in an empty environment.
func check(es []Entry) error {
	one := Result{Client: genericJSON, Entries: es}
	_, _, err := config.Load(config.LoadOptions{Path: "check.yaml", Data: one.YAML()})
	if errs := config.Errors(err); len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			key := strings.TrimPrefix(strings.TrimPrefix(e.Key, "servers[0]"), ".")
			if key != "" {
				key += ": "
			}
			msgs = append(msgs, key+e.Msg)
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return err
}

// maxFileSize bounds a client file (Claude Code's ~/.claude.json holds
// history and grows).
const maxFileSize = 64 << 20

// maxServersSize bounds the server maps of the files read (all of them
// together, as written): what is imported must fit in a gateway
// configuration file, which holds at most 4 MiB, and parsing and writing
// server entries costs far more per byte than skipping history.
const maxServersSize = 4 << 20

// readFile reads a client's file with config.ReadFile (a regular file,
// bounded), with an error that names the file.
func readFile(p string) ([]byte, error) {
	data, err := config.ReadFile(p, maxFileSize)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &Error{File: p, Msg: "no such file", Err: err}
	case err != nil:
		return nil, &Error{File: p, Msg: err.Error(), Err: err}
	}
	return data, nil
}

func joinOr(ps []string) string {
	switch len(ps) {
	case 0:
		return "nothing"
	case 1:
		return ps[0]
	}
	s := ""
	for i, p := range ps {
		switch {
		case i == len(ps)-1:
			s += " or " + p
		case i > 0:
			s += ", " + p
		default:
			s = p
		}
	}
	return s
}
