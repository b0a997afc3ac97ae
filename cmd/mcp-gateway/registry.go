package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
	"github.com/mcp-gateway/mcp-gateway/config/importer"
	"github.com/mcp-gateway/mcp-gateway/config/registry"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// secretStore is where add puts the values of secret inputs: the secret
// store of `mcp-gateway secret` (docs/secrets.md). A small interface of
// add's own, so that tests give it a double.
type secretStore interface {
	Set(name, value string) error
}

// addSecretStore is the store add writes secrets to: e.secrets when set
// (tests), else the user's secret store (docs/secrets.md).
func addSecretStore(e env) (secretStore, error) {
	if e.secrets != nil {
		return e.secrets, nil
	}
	s, err := openSecretStore(e)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// registrySetup is what search and add share: the configuration (for
// the registry's URL and the servers there are) and the client.
type registrySetup struct {
	path   string // the configuration file
	exists bool
	cfg    *config.Config
	client *registry.Client
	home   string
}

func setupRegistry(inv *registryInvocation, e env) (*registrySetup, error) {
	// The home directory as e's environment has it (os.UserHomeDir's
	// variables), so that a test's run is its own.
	homeVar := "HOME"
	if runtime.GOOS == "windows" {
		homeVar = "USERPROFILE"
	}
	home, _ := e.lookup(homeVar)
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	path := inv.configPath
	if path == "" {
		path = config.DefaultPath(home)
	}
	path, err := filepath.Abs(config.ExpandHome(path, home))
	if err != nil {
		return nil, err
	}
	load := config.LoadOptions{Path: path, Home: home, Env: e.lookup}
	_, statErr := os.Stat(path)
	exists := statErr == nil
	if errors.Is(statErr, fs.ErrNotExist) {
		load.Data = []byte{} // add creates it
	}
	cfg, _, err := config.Load(load)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(cfg.Gateway.Registry.TimeoutMS) * time.Millisecond
	return &registrySetup{
		path:   path,
		exists: exists,
		cfg:    cfg,
		home:   home,
		client: &registry.Client{
			BaseURL: cfg.Gateway.Registry.URL,
			HTTP:    &http.Client{Timeout: timeout},
			Cache:   &registry.Cache{Dir: config.RegistryCacheDir(home, runtime.GOOS, e.lookup)},
		},
	}, nil
}

// runRegistry runs search or add.
func runRegistry(ctx context.Context, args []string, e env) int {
	inv, err := parseRegistryArgs(args)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcp-gateway: %v\nRun 'mcp-gateway --help' for usage.\n", err)
		return exitUsage
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(e.stderr, "mcp-gateway: "+inv.command+": "+format+"\n", args...)
		return code
	}
	setup, err := setupRegistry(inv, e)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if inv.command == "search" {
		return runSearch(ctx, inv, setup, e, fail)
	}
	return runAdd(ctx, inv, setup, e, fail)
}

// offlineNote says on stderr that an answer came from the cache.
func offlineNote(e env, a registry.Answer) {
	if a.Offline {
		fmt.Fprintf(e.stderr, "mcp-gateway: offline: %v; showing the registry's answer of %s\n", a.Cause, a.FetchedAt.Local().Format(time.DateTime))
	}
}

// runSearch is `mcp-gateway search TEXT`: the latest version of each
// server whose name holds TEXT.
func runSearch(ctx context.Context, inv *registryInvocation, setup *registrySetup, e env, fail func(int, string, ...any) int) int {
	list, ans, err := setup.client.Search(ctx, inv.text)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	offlineNote(e, ans)
	if inv.json {
		if err := writeJSON(e.stdout, map[string]any{"servers": list, "offline": ans.Offline}); err != nil {
			return fail(exitFailure, "%v", err)
		}
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stderr, "mcp-gateway: search: no server in %s matches %q\n", setup.client.BaseURL, inv.text)
		return exitFailure
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tRUNS AS\tDESCRIPTION")
	for _, r := range list {
		s := r.Server
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", oneLine(s.Name, 100), oneLine(s.Version, 30), strings.Join(runsAs(s), ", "), oneLine(s.Description, 70))
	}
	tw.Flush()
	plural := "s"
	if len(list) == 1 {
		plural = ""
	}
	fmt.Fprintf(e.stdout, "\n%d server%s; add one with: mcp-gateway add NAME[@VERSION]\n", len(list), plural)
	return exitOK
}

// runsAs lists how an entry can be run: its remotes' transports and its
// packages' registry types.
func runsAs(s registry.ServerJSON) []string {
	var out []string
	for _, r := range s.Remotes {
		out = append(out, oneLine(r.Type, 20))
	}
	for _, p := range s.Packages {
		out = append(out, oneLine(p.RegistryType, 20))
	}
	out = slices.Compact(out)
	if len(out) == 0 {
		out = []string{"-"}
	}
	return out
}

// runAdd is `mcp-gateway add NAME[@VERSION]`: the registry's entry made
// into a server entry of the configuration (docs/registry.md).
func runAdd(ctx context.Context, inv *registryInvocation, setup *registrySetup, e env, fail func(int, string, ...any) int) int {
	r, ans, err := setup.client.Get(ctx, inv.name, inv.version)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	offlineNote(e, ans)
	tty := e.tty
	if tty == nil {
		tty = terminalOf(e.stdin, e.stderr)
	}
	req := addRequest{serverName: inv.serverName, via: inv.via, env: inv.env, headers: inv.headers, vars: inv.vars}
	if tty != nil {
		req.ask = func(q registry.Question) (string, error) { return ask(ctx, tty, q) }
	}
	d, err := draftAdd(setup, e, r, req)
	var usage usageError
	switch {
	case errors.As(err, &usage):
		return fail(exitUsage, "%v", err)
	case errors.Is(err, errInterrupted):
		return fail(exitFailure, "interrupted; nothing written")
	case err != nil:
		return fail(exitFailure, "%v", err)
	}
	d.describe(e.stderr)
	if !inv.yes {
		if tty == nil {
			return fail(exitUsage, "not on a terminal to ask: pass --yes to add it")
		}
		a, err := tty.Line(ctx, "Add it? [y/N] ")
		if err != nil {
			return fail(exitFailure, "interrupted; nothing written")
		}
		if a = strings.ToLower(strings.TrimSpace(a)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stderr, "mcp-gateway: add: nothing written")
			return exitFailure
		}
	}
	if err := d.commit(e); err != nil {
		return fail(exitFailure, "%v", err)
	}
	name := d.plan.Server.Name
	fmt.Fprintf(e.stderr, "mcp-gateway: add: added %s to %s (a running gateway picks it up now)\n", name, setup.path)
	fmt.Fprintf(e.stderr, "Review its tools, then approve them: mcp-gateway tools --changes; mcp-gateway approve %s --all\n", name)
	if note := d.firstStart(); note != "" {
		fmt.Fprintln(e.stderr, note)
	}
	return exitOK
}

// firstStart says, for a server run from a package, that its first start
// downloads it and where that shows: a client's first start of the
// gateway otherwise waits on it without a word. "" for a remote.
func (d *addDraft) firstStart() string {
	s := d.plan.Server
	var what string
	switch d.plan.Via {
	case registry.ViaNPM, registry.ViaPyPI:
		what = "its first start downloads the package (" + shownWord(s.Command) + ")"
	case registry.ViaOCI:
		what = "its first start pulls the image (docker)"
	default:
		return ""
	}
	return fmt.Sprintf("Note: %s: a running gateway starts it now, and mcp-gateway status shows what it is doing until it is ready.", what)
}

// addRequest is what one add is asked: the command line's flags, or the
// dashboard's form (docs/registry.md). The command line and the
// dashboard share one path from here: draftAdd, describe, commit.
type addRequest struct {
	serverName         string            // --name; "" names it after the registry's name
	via                string            // --remote, --package
	env, headers, vars map[string]string // given values, by input name
	// ask asks for a required input nobody gave; nil when there is
	// nobody to ask (the input is then missing: a *registry.MissingError).
	ask func(registry.Question) (string, error)
}

// addDraft is an add made ready and checked, nothing written yet: the
// plan (with the secrets' values, for commit to store), and the
// configuration file's text with the entry in it.
type addDraft struct {
	setup     *registrySetup
	resp      *registry.ServerResponse
	plan      *registry.Plan
	notes     []string
	old, data []byte // the file as read (nil: none) and as it will be
}

// draftAdd makes registry entry r into a server entry of setup's
// configuration, as req asks: the plan, the sandbox, the comment, the
// file's new text, checked to load. A name the configuration has is a
// usageError.
func draftAdd(setup *registrySetup, e env, r *registry.ServerResponse, req addRequest) (*addDraft, error) {
	names := make([]string, 0, len(setup.cfg.Servers))
	for _, s := range setup.cfg.Servers {
		names = append(names, s.Name)
	}
	name := req.serverName
	switch {
	case name == "":
		name = serverNameOf(r.Server.Name, names)
	case slices.Contains(names, name):
		return nil, usagef("the configuration already has a server %q; choose another with --name", name)
	case !serverNameChars.MatchString(name):
		return nil, usagef("--name %q may hold only letters, digits, '_' and '-'", name)
	}
	opts := registry.Options{Via: req.via, Name: name, Env: req.env, Headers: req.headers, Vars: req.vars, Ask: req.ask}
	plan, err := registry.Build(r, opts)
	if err != nil {
		if errors.Is(err, errInterrupted) {
			return nil, err
		}
		return nil, fmt.Errorf("%s@%s: %w", r.Server.Name, r.Server.Version, err)
	}
	notes := plan.Notes
	switch plan.Via {
	case registry.ViaRemote:
	case registry.ViaOCI:
		// The sandbox confines the docker client, which mounts nothing
		// itself (the daemon does): the paths in its args are the
		// container's or the daemon's business, none to grant.
		plan.Server.Sandbox = config.Sandbox{Mode: config.SandboxBestEffort}
	default:
		notes = append(notes, importer.Confine(&plan.Server, importer.Options{Home: setup.home, Env: e.lookup, Self: config.NewSelf(setup.path, setup.home, e.lookup)})...)
	}
	entry := importer.ServerNode(plan.Server)
	entry.HeadComment = strings.Join(append([]string{
		fmt.Sprintf("added by mcp-gateway add from %s: %s@%s", setup.client.BaseURL, r.Server.Name, r.Server.Version),
		"trust: approve: its tools wait for review (mcp-gateway tools --changes, mcp-gateway approve " + name + " --all)",
	}, notes...), "\n")

	old, err := os.ReadFile(setup.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	data, err := registry.AddServer(old, entry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setup.path, err)
	}
	if err := checkAdded(setup, e, old, plan); err != nil {
		return nil, fmt.Errorf("the entry would not load, so it is not written: %w", err)
	}
	return &addDraft{setup: setup, resp: r, plan: plan, notes: notes, old: old, data: data}, nil
}

// describe says what the add will write and run.
func (d *addDraft) describe(w io.Writer) {
	describePlan(w, d.resp, d.plan, d.notes, d.setup.path)
}

// commit stores the secrets, then writes the file atomically, unless it
// changed since draftAdd read it. On an error the file is as it was.
func (d *addDraft) commit(e env) error {
	path := d.setup.path
	if len(d.plan.Secrets) > 0 {
		store, err := addSecretStore(e)
		if err != nil {
			return fmt.Errorf("%w; nothing written", err)
		}
		for _, k := range slices.Sorted(maps.Keys(d.plan.Secrets)) {
			if err := store.Set(k, d.plan.Secrets[k]); err != nil {
				return fmt.Errorf("store secret %s: %w; the configuration is not changed", k, err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// The file may have been edited while add asked: the entry was made
	// for what was read, and writing it would lose that edit.
	if now, err := os.ReadFile(path); (err == nil || !errors.Is(err, fs.ErrNotExist)) && !bytes.Equal(now, d.old) {
		return fmt.Errorf("%s changed while add ran; nothing written: run add again", path)
	}
	if err := atomicfile.Replace(path, d.data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// checkAdded loads the configuration with the plan's entry added, its
// secrets given as plain text (their references are the secret store's
// to resolve): what add writes must load.
func checkAdded(setup *registrySetup, e env, old []byte, plan *registry.Plan) error {
	s := plan.Server
	plain := func(v string) string {
		for k := range plan.Secrets {
			v = strings.ReplaceAll(v, registry.SecretRef(k), "secret")
		}
		return v
	}
	s.Args = slices.Clone(s.Args)
	for i := range s.Args {
		s.Args[i] = plain(s.Args[i])
	}
	s.Env, s.Headers = maps.Clone(s.Env), maps.Clone(s.Headers)
	for k, v := range s.Env {
		s.Env[k] = plain(v)
	}
	for k, v := range s.Headers {
		s.Headers[k] = plain(v)
	}
	data, err := registry.AddServer(old, importer.ServerNode(s))
	if err != nil {
		return err
	}
	_, _, err = config.Load(config.LoadOptions{Path: setup.path, Data: data, Home: setup.home, Env: e.lookup})
	return err
}

// describePlan says what add will write and run.
func describePlan(w io.Writer, r *registry.ServerResponse, plan *registry.Plan, notes []string, path string) {
	s := plan.Server
	fmt.Fprintf(w, "%s %s: %s\n", oneLine(r.Server.Name, 100), oneLine(r.Server.Version, 30), oneLine(r.Server.Description, 200))
	fmt.Fprintf(w, "  adds server %q to %s\n", s.Name, path)
	if s.URL != "" {
		fmt.Fprintf(w, "  connects to: %s (%s)\n", shownWord(s.URL), s.Transport)
	} else {
		words := []string{shownWord(s.Command)}
		for _, a := range s.Args {
			words = append(words, shownWord(a))
		}
		fmt.Fprintf(w, "  runs: %s\n", strings.Join(words, " "))
	}
	for _, kv := range []struct {
		what string
		m    map[string]string
	}{{"env", s.Env}, {"header", s.Headers}} {
		for _, k := range slices.Sorted(maps.Keys(kv.m)) {
			v := shownWord(kv.m[k])
			if strings.Contains(kv.m[k], "${secret:") {
				v += " (a secret: stored in the secret store, not in the file)"
			}
			fmt.Fprintf(w, "  %s %s=%s\n", kv.what, shownWord(k), v)
		}
	}
	if s.Sandbox.Mode != "" {
		fmt.Fprintf(w, "  sandbox: %s\n", s.Sandbox.Mode)
	}
	fmt.Fprintf(w, "  trust: approve (its tools are shown to clients once you approve them)\n")
	for _, n := range notes {
		fmt.Fprintf(w, "  note: %s\n", oneLine(n, 300))
	}
}

// shownWord is a word of a command line, a name or a value from the
// registry as the terminal shows it: quoted, with escapes, when it has
// spaces, quotes, or characters a terminal acts on or a person does not
// see (the text is the publisher's: it must not move the cursor over
// what add says it will run).
func shownWord(a string) string {
	hidden := func(r rune) bool { return !unicode.IsGraphic(r) || safetext.Invisible(r) }
	if a == "" || strings.ContainsAny(a, " \t\"'") || strings.ContainsFunc(a, hidden) {
		return strconv.QuoteToGraphic(a)
	}
	return a
}

// ask asks for one input on the terminal: a secret without echo, a
// choice among its choices, a default taken by an empty answer.
func ask(ctx context.Context, tty prompter, q registry.Question) (string, error) {
	in := q.Input
	label := fmt.Sprintf("%s %s", q.Kind, shownWord(q.Name))
	if in.Description != "" {
		label += " (" + oneLine(in.Description, 120) + ")"
	}
	if len(in.Choices) > 0 {
		label += " [" + strings.Join(in.Choices, "|") + "]"
	}
	if in.Default != "" && !in.IsSecret {
		label += " [default " + oneLine(in.Default, 60) + "]"
	}
	for range 3 {
		var v string
		var err error
		if in.IsSecret {
			v, err = tty.Secret(ctx, label+" (hidden): ")
		} else {
			v, err = tty.Line(ctx, label+": ")
		}
		if err != nil {
			return "", err
		}
		if v == "" {
			v = in.Default
		}
		if v != "" && (len(in.Choices) == 0 || slices.Contains(in.Choices, v)) {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s %s: no valid answer", q.Kind, q.Name)
}

var serverNameChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// serverNameOf is the configuration name of registry server name: its
// last path segment, with any other character than letters, digits, '_'
// and '-' made '-', and a number appended if taken.
func serverNameOf(name string, taken []string) string {
	base := name[strings.LastIndex(name, "/")+1:]
	base = strings.Trim(regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(base, "-"), "-")
	if base == "" {
		base = "server"
	}
	n := base
	for i := 2; slices.Contains(taken, n); i++ {
		n = fmt.Sprintf("%s-%d", base, i)
	}
	return n
}
