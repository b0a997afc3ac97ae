package gateway

// Wire scripts: the session's behaviour on the wire, client ⇄ gateway ⇄
// backend, written as txtar scripts (testdata/scripts/*.txtar) and run in
// the test's process under testing/synctest, as go-sdk's conformance tests
// are. The gateway is the real one (stdio session, backends.Manager,
// supervision); each backend is a scripted peer on an in-memory pipe
// (backends.Options.Dial), and time is synctest's: a timeout of 30 s passes
// at once, and "nothing more arrives" is a fact, not a guess.
//
// The API is runWireScript (and TestWireScripts, which runs every script);
// everything else in this file is its machinery.
//
// # Format
//
// The archive's comment is the script, one step per line ('#' starts a
// comment line). Its files are the configuration (config.yaml, read by
// config.Load as the gateway's own file; every server is dialed, whatever
// its command) and each backend's surface: NAME.tools.json,
// NAME.prompts.json, NAME.resources.json, NAME.templates.json (the list
// arrays), NAME.initialize.json and NAME.discover.json (the results). A
// backend answers initialize, server/discover (-32601 without a
// discover file: a backend of the handshake era), the four lists and
// notifications/initialized by itself from its surface, and keeps a
// subscriptions/listen open without a word, unless the script takes
// those methods over (manual); every other message it receives is for the
// script to expect.
//
// Steps:
//
//	client -> gateway MSG      the client sends MSG (its bytes as written, compacted)
//	NAME -> gateway MSG        backend NAME sends MSG
//	gateway -> client MSG      the next message the client got matches MSG
//	gateway -> NAME MSG        the next message backend NAME got matches MSG
//	gateway -> client exact MSG   ... and is MSG byte for byte
//	gateway -> client framed MSG  ... and came Content-Length framed
//	gateway -> client unordered MSG   the first message the client got that matches MSG
//	handshake [CLIENT [CAPS]]  initialize as client CLIENT (2025-11-25), answered, then initialized
//	sleep DURATION             let DURATION pass on the fake clock
//	quiet                      nothing was sent that the script has not expected
//	crash NAME                 backend NAME's output ends (its session ends: a crash)
//	close client               the client's input ends
//	write client|NAME "TEXT"   the client or backend NAME writes TEXT (a Go string literal; $VAR substituted) as it is
//	define VAR MSG             $VAR stands for MSG from here on
//	surface NAME KIND FILE     backend NAME's KIND (tools, prompts, ...) is now FILE's
//	manual NAME [METHOD...]    backend NAME's script answers METHOD (all methods when none)
//	fail-start NAME            dialing NAME fails (before the first message only)
//
// A MSG may continue on the following lines until its braces balance.
// Before each step every goroutine of the test settles (synctest.Wait), so
// an expectation sees everything the gateway will send without time
// passing. Every message must be expected, in order per peer; at the end
// the script is implicitly quiet.
//
// Matching: a MSG is compared as JSON (members in any order, strings by
// their value), except the id, which must be the same bytes, and numbers,
// which must be the same literal (1e30 is not 1000000000000000000000000000000).
// With exact, the whole message must be the same bytes. $NAME, outside a
// string, binds the value found there the first time and stands for it
// after that (exact bytes: an id the gateway chose, a token); $_ matches
// any value.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWireScripts runs every script of testdata/scripts.
func TestWireScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runWireScript(t, f)
		})
	}
}

// runWireScript runs the script at path in a synctest bubble of its own.
func runWireScript(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := parseWireScript(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	synctest.Test(t, func(t *testing.T) {
		r := &scriptRun{t: t, sc: sc, vars: map[string][]byte{}, backends: map[string]*fakeBackend{}}
		defer r.logOnFailure()
		defer r.shutdown() // also after a failed step: every goroutine of the bubble must end
		r.run()
	})
}

// wireScript is a parsed script.
type wireScript struct {
	steps []scriptStep
	files map[string][]byte
}

type scriptStep struct {
	line   int
	verb   string   // "send", "expect", or a directive's name
	args   []string // the directive's words; for send/expect: from, to
	exact  bool     // expect: the same bytes
	framed bool     // expect: the message came Content-Length framed
	// unordered: expect the first matching message of the peer's, not
	// the next one (two goroutines' messages in no set order)
	unordered bool
	msg       string // the message's text, as written
}

// parseWireScript reads a txtar archive: the comment is the script.
func parseWireScript(data []byte) (*wireScript, error) {
	sc := &wireScript{files: map[string][]byte{}}
	comment, files := splitTxtar(data)
	for name, body := range files {
		sc.files[name] = body
	}
	lines := strings.Split(comment, "\n")
	for i := 0; i < len(lines); i++ {
		n, line := i+1, strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		st := scriptStep{line: n}
		if from, rest, ok := strings.Cut(line, " -> "); ok {
			from = strings.TrimSpace(from)
			to, msg, _ := strings.Cut(strings.TrimSpace(rest), " ")
			msg = strings.TrimSpace(msg)
			for _, kw := range []string{"unordered ", "framed ", "exact "} {
				if m, ok := strings.CutPrefix(msg, kw); ok {
					msg = m
					st.exact = st.exact || kw == "exact "
					st.framed = st.framed || kw == "framed "
					st.unordered = st.unordered || kw == "unordered "
				}
			}
			for !balanced(msg) && i+1 < len(lines) {
				i++
				msg += "\n" + lines[i]
			}
			if !balanced(msg) {
				return nil, fmt.Errorf("line %d: unbalanced message", n)
			}
			switch {
			case from == "gateway" && to != "gateway":
				st.verb = "expect"
			case to == "gateway" && from != "gateway":
				st.verb = "send"
				if st.exact || st.framed || st.unordered {
					return nil, fmt.Errorf("line %d: exact and framed are for expectations", n)
				}
			default:
				return nil, fmt.Errorf("line %d: an arrow goes to or from the gateway", n)
			}
			st.args, st.msg = []string{from, to}, msg
		} else {
			f := strings.Fields(line)
			st.verb, st.args = f[0], f[1:]
			if st.verb == "define" || st.verb == "handshake" {
				// The rest of the line (a message) may run on.
				for !balanced(line) && i+1 < len(lines) {
					i++
					line += "\n" + lines[i]
				}
				parts := strings.SplitN(line, " ", 3)
				st.args = parts[1:]
			}
			switch st.verb {
			case "write":
				who, text, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "write")), " ")
				q, err := strconv.Unquote(strings.TrimSpace(text))
				if err != nil {
					return nil, fmt.Errorf("line %d: write client|NAME \"TEXT\": %v", n, err)
				}
				st.args, st.msg = []string{who}, q
			case "handshake", "sleep", "quiet", "crash", "close", "define", "surface", "manual", "fail-start":
			default:
				return nil, fmt.Errorf("line %d: unknown step %q", n, st.verb)
			}
		}
		sc.steps = append(sc.steps, st)
	}
	return sc, nil
}

// splitTxtar splits a txtar archive into its comment and files.
func splitTxtar(data []byte) (comment string, files map[string][]byte) {
	files = map[string][]byte{}
	name := ""
	var cur []byte
	isComment := true
	flush := func() {
		if isComment {
			comment = string(cur)
		} else {
			files[name] = cur
		}
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		l := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(l, []byte("-- ")) && bytes.HasSuffix(l, []byte(" --")) && len(l) > 6 {
			flush()
			name, cur, isComment = string(bytes.TrimSpace(l[3:len(l)-3])), nil, false
			continue
		}
		cur = append(cur, line...)
	}
	flush()
	return comment, files
}

// balanced reports whether s's braces and brackets outside strings balance
// (and it has any).
func balanced(s string) bool {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return depth == 0 && !inStr
}

// scriptRun is one run of a script.
type scriptRun struct {
	t   *testing.T
	sc  *wireScript
	cur scriptStep

	vars     map[string][]byte
	backends map[string]*fakeBackend

	started bool
	mgr     *backends.Manager
	stdin   *memPipe
	client  *msgQueue // what the gateway wrote to the client
	served  chan struct{}
	stop    context.CancelFunc
	logs    lockedBuffer
}

func (r *scriptRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("line %d: "+format, append([]any{r.cur.line}, args...)...)
}

func (r *scriptRun) logOnFailure() {
	if r.t.Failed() {
		r.t.Logf("gateway log:\n%s", r.logs.String())
	}
}

func (r *scriptRun) run() {
	for _, st := range r.sc.steps {
		r.cur = st
		switch st.verb {
		case "define":
			if len(st.args) != 2 {
				r.fatalf("define VAR MSG")
			}
			r.vars[st.args[0]] = compactJSON(r, r.subst(st.args[1]))
			continue
		case "fail-start", "manual", "surface":
			if st.verb == "fail-start" && r.started {
				r.fatalf("fail-start after the gateway started")
			}
			r.directive(st)
			continue
		}
		if !r.started {
			r.start()
		}
		synctest.Wait()
		switch st.verb {
		case "send":
			r.send(st)
		case "expect":
			r.expect(st)
		case "handshake":
			r.handshake(st.args)
		case "sleep":
			d, err := time.ParseDuration(strings.Join(st.args, ""))
			if err != nil {
				r.fatalf("sleep: %v", err)
			}
			time.Sleep(d)
		case "quiet":
			r.quiet()
		case "crash":
			r.backend(st.args[0]).crash()
		case "write":
			text := r.subst(st.msg)
			if st.args[0] == "client" {
				r.stdin.Write(text)
			} else if err := r.backend(st.args[0]).send(text); err != nil {
				r.fatalf("write %s: %v", st.args[0], err)
			}
		case "close":
			if len(st.args) != 1 || st.args[0] != "client" {
				r.fatalf("close client")
			}
			r.stdin.Close()
		}
	}
	if !r.started {
		r.start()
	}
	synctest.Wait()
	r.cur.line = 0
	r.quiet()
}

// directive applies a step that configures a backend.
func (r *scriptRun) directive(st scriptStep) {
	if len(st.args) == 0 {
		r.fatalf("%s needs a backend", st.verb)
	}
	b := r.backend(st.args[0])
	b.mu.Lock()
	defer b.mu.Unlock()
	switch st.verb {
	case "fail-start":
		b.failStart = true
	case "manual":
		if len(st.args) == 1 {
			b.manual["*"] = true
		}
		for _, m := range st.args[1:] {
			b.manual[m] = true
		}
	case "surface":
		if len(st.args) != 3 {
			r.fatalf("surface NAME KIND FILE")
		}
		body, ok := r.sc.files[st.args[2]]
		if !ok {
			r.fatalf("no file %s", st.args[2])
		}
		b.surface[st.args[1]] = compactJSON(r, body)
	}
}

// backend returns the fake backend called name, made at first use.
func (r *scriptRun) backend(name string) *fakeBackend {
	if b := r.backends[name]; b != nil {
		return b
	}
	b := &fakeBackend{name: name, surface: map[string]json.RawMessage{}, manual: map[string]bool{}, got: &msgQueue{}}
	for _, kind := range []string{"tools", "prompts", "resources", "templates", "initialize", "discover"} {
		if body, ok := r.sc.files[name+"."+kind+".json"]; ok {
			b.surface[kind] = compactJSON(r, body)
		}
	}
	r.backends[name] = b
	return b
}

// start starts the gateway as `mcp-gateway serve` would, on in-memory
// pipes, with every server dialed to its fake.
func (r *scriptRun) start() {
	r.started = true
	cfgText := r.sc.files["config.yaml"]
	if cfgText == nil {
		cfgText = []byte("servers: []\n")
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: "config.yaml", Data: cfgText})
	if err != nil {
		r.t.Fatalf("config.yaml: %v", err)
	}
	for _, s := range cfg.Servers {
		r.backend(s.Name)
	}
	fakes := maps.Clone(r.backends) // the Manager's goroutines read it while the script runs
	log := slog.New(slog.NewTextHandler(&r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.mgr = backends.New(backends.Options{
		Servers:        cfg.Servers,
		Logger:         log.With("component", "backends"),
		DefaultTimeout: cfg.DefaultTimeout(),
		StartupTimeout: cfg.StartupTimeout(),
		StartLimit:     cfg.StartLimit(),
		ClientInfo:     &mcp.Implementation{Name: "mcp-gateway", Version: "script"},
		AwaitClient:    true,
		Dial: func(ctx context.Context, s config.Server) (io.ReadWriteCloser, error) {
			return fakes[s.Name].dial()
		},
	})
	gw := New(Options{Config: cfg, Logger: log, Backends: r.mgr, Version: "script"})
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	r.mgr.Start(ctx)
	r.stdin, r.client = newMemPipe(), &msgQueue{}
	r.served = make(chan struct{})
	go func() {
		defer close(r.served)
		gw.ServeStdio(ctx, r.stdin, r.client)
	}()
}

// shutdown ends the client's input, then the gateway and its backends, as
// the command does; every goroutine of the run must end.
func (r *scriptRun) shutdown() {
	if !r.started || r.stop == nil {
		return
	}
	r.stdin.Close()
	<-r.served
	r.stop()
	r.mgr.Close()
}

// send writes a step's message to the gateway, from the client or a backend.
func (r *scriptRun) send(st scriptStep) {
	msg := compactJSON(r, r.subst(st.msg))
	if st.args[0] == "client" {
		r.stdin.Write(append(msg, '\n'))
		return
	}
	b := r.backend(st.args[0])
	if err := b.send(append(msg, '\n')); err != nil {
		r.fatalf("%s -> gateway: %v", st.args[0], err)
	}
}

// expect takes the next message of a step's receiver and matches it.
func (r *scriptRun) expect(st scriptStep) {
	r.t.Helper()
	q := r.client
	if st.args[1] != "client" {
		q = r.backend(st.args[1]).got
	}
	if st.unordered {
		// The first message that matches, wherever it is in the queue.
		if _, ok := q.take(func(got []byte, framed bool) bool {
			return framed == st.framed && r.match(st.msg, got, st.exact) == nil
		}); !ok {
			r.fatalf("gateway -> %s: nothing that matches %s arrived", st.args[1], st.msg)
		}
		return
	}
	got, framed, ok := q.next()
	if !ok {
		r.fatalf("gateway -> %s: nothing arrived; want %s", st.args[1], st.msg)
	}
	if framed != st.framed {
		r.fatalf("gateway -> %s: framed %v, want %v: %s", st.args[1], framed, st.framed, got)
	}
	if err := r.match(st.msg, got, st.exact); err != nil {
		r.fatalf("gateway -> %s:\n got %s\nwant %s\n%v", st.args[1], got, st.msg, err)
	}
}

// handshake initializes the session as a client of 2025-11-25.
func (r *scriptRun) handshake(args []string) {
	name, caps := "script-client", "{}"
	if len(args) > 0 {
		name = args[0]
	}
	if len(args) > 1 {
		caps = string(r.subst(args[1]))
	}
	r.stdin.Write([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"` + name + `","version":"1"}}}` + "\n"))
	synctest.Wait()
	got, _, ok := r.client.next()
	if !ok || wire.Member(got, "result") == nil {
		r.fatalf("handshake: initialize answered %s", got)
	}
	r.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
}

// quiet fails if a peer got a message the script has not expected.
func (r *scriptRun) quiet() {
	r.t.Helper()
	if got, _, ok := r.client.next(); ok {
		r.fatalf("unexpected gateway -> client %s", got)
	}
	for _, name := range slices.Sorted(maps.Keys(r.backends)) {
		if got, _, ok := r.backends[name].got.next(); ok {
			r.fatalf("unexpected gateway -> %s %s", name, got)
		}
	}
}

// placeholder is $NAME outside a JSON string.
var placeholder = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*`)

// scanPlaceholders calls fn for each placeholder of text outside strings,
// with its offsets.
func scanPlaceholders(text string, fn func(start, end int, name string)) {
	inStr, esc := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && c == '$':
			if m := placeholder.FindString(text[i:]); m != "" {
				fn(i, i+len(m), m[1:])
				i += len(m) - 1
			}
		}
	}
}

// subst replaces the bound placeholders of text with their values; an
// unbound one is an error in a message to send.
func (r *scriptRun) subst(text string) []byte {
	var out strings.Builder
	last := 0
	scanPlaceholders(text, func(start, end int, name string) {
		v, ok := r.vars[name]
		if !ok {
			r.fatalf("$%s is not bound", name)
		}
		out.WriteString(text[last:start])
		out.Write(v)
		last = end
	})
	out.WriteString(text[last:])
	return []byte(out.String())
}

// sentinel is the string an unbound placeholder becomes while its message
// is parsed.
func sentinel(name string) string { return "\x00$" + name }

// match matches got against want (see the file's comment), binding
// want's unbound placeholders.
func (r *scriptRun) match(want string, got []byte, exact bool) error {
	// Bound placeholders become their values, unbound ones sentinels.
	var text strings.Builder
	var unbound []string
	last := 0
	scanPlaceholders(want, func(start, end int, name string) {
		text.WriteString(want[last:start])
		if v, ok := r.vars[name]; ok && name != "_" {
			text.Write(v)
		} else {
			s, _ := json.Marshal(sentinel(name))
			text.Write(s)
			unbound = append(unbound, name)
		}
		last = end
	})
	text.WriteString(want[last:])
	w := compactJSON(r, []byte(text.String()))
	binds := map[string][]byte{}
	var err error
	if exact {
		err = matchExact(w, got, unbound, binds)
	} else {
		if id := wire.Member(w, "id"); id != nil && !isSentinel(id) && !bytes.Equal(id, wire.Member(got, "id")) {
			return fmt.Errorf("id %s, want %s byte for byte", wire.Member(got, "id"), id)
		}
		err = matchJSON(w, got, "", binds)
	}
	if err != nil {
		return err
	}
	for name, v := range binds {
		if name != "_" {
			r.vars[name] = v
		}
	}
	return nil
}

func isSentinel(raw []byte) bool {
	s, ok := wire.Unquote(raw)
	return ok && strings.HasPrefix(s, "\x00$")
}

// matchExact matches got byte for byte against want, whose sentinels
// match any JSON scalar.
func matchExact(want, got []byte, unbound []string, binds map[string][]byte) error {
	expr := regexp.QuoteMeta(string(want))
	for _, name := range unbound {
		s, _ := json.Marshal(sentinel(name))
		expr = strings.Replace(expr, regexp.QuoteMeta(string(s)), `("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)`, 1)
	}
	m := regexp.MustCompile("^" + expr + "$").FindSubmatch(bytes.TrimSpace(got))
	if m == nil {
		return errors.New("not the same bytes")
	}
	for i, name := range unbound {
		if prev, ok := binds[name]; ok && name != "_" && !bytes.Equal(prev, m[i+1]) {
			return fmt.Errorf("$%s is %s and %s", name, prev, m[i+1])
		}
		binds[name] = bytes.Clone(m[i+1])
	}
	return nil
}

// matchJSON matches the JSON value got against want: objects by their
// members in any order, arrays element by element, strings by value,
// numbers and literals by their text.
func matchJSON(want, got []byte, path string, binds map[string][]byte) error {
	want, got = bytes.TrimSpace(want), bytes.TrimSpace(got)
	if isSentinel(want) {
		s, _ := wire.Unquote(want)
		name := s[2:]
		if prev, ok := binds[name]; ok && name != "_" && !bytes.Equal(prev, got) {
			return fmt.Errorf("%s: $%s is %s and %s", path, name, prev, got)
		}
		binds[name] = bytes.Clone(got)
		return nil
	}
	if len(want) == 0 || len(got) == 0 {
		return fmt.Errorf("%s: %s, want %s", path, got, want)
	}
	switch want[0] {
	case '{':
		var w, g map[string]json.RawMessage
		if err := json.Unmarshal(got, &g); err != nil || got[0] != '{' {
			return fmt.Errorf("%s: %s, want an object", path, got)
		}
		json.Unmarshal(want, &w)
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: no member %q", path, k)
			}
			if err := matchJSON(wv, gv, path+"."+k, binds); err != nil {
				return err
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return fmt.Errorf("%s: unexpected member %q: %s", path, k, g[k])
			}
		}
	case '[':
		var w, g []json.RawMessage
		if err := json.Unmarshal(got, &g); err != nil || got[0] != '[' {
			return fmt.Errorf("%s: %s, want an array", path, got)
		}
		json.Unmarshal(want, &w)
		if len(w) != len(g) {
			return fmt.Errorf("%s: %d elements, want %d", path, len(g), len(w))
		}
		for i := range w {
			if err := matchJSON(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), binds); err != nil {
				return err
			}
		}
	case '"':
		ws, _ := wire.Unquote(want)
		gs, ok := wire.Unquote(got)
		if !ok || ws != gs {
			return fmt.Errorf("%s: %s, want %s", path, got, want)
		}
	default:
		if !bytes.Equal(want, got) {
			return fmt.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	return nil
}

// compactJSON compacts a message as written in a script: insignificant
// whitespace goes, every byte of a value stays.
func compactJSON(r *scriptRun, text []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, bytes.TrimSpace(text)); err != nil {
		r.fatalf("bad JSON %q: %v", text, err)
	}
	return b.Bytes()
}

// fakeBackend is a scripted MCP server: a peer on an in-memory pipe that
// answers its handshake and lists from its surface and leaves the rest to
// the script. It outlives its sessions (a restart dials it again).
type fakeBackend struct {
	name string

	mu        sync.Mutex
	surface   map[string]json.RawMessage // by kind: tools, prompts, resources, templates, initialize, discover
	manual    map[string]bool            // methods the script answers; "*": all
	failStart bool
	sess      *fakeSession // the current session; nil when none
	got       *msgQueue    // messages for the script to expect
}

// fakeSession is one session of a fake backend: what the gateway's conn
// reads and writes.
type fakeSession struct {
	b    *fakeBackend
	out  *memPipe // the backend's messages, read by the gateway
	mu   sync.Mutex
	part []byte // a line the gateway has begun to write
}

func (b *fakeBackend) dial() (io.ReadWriteCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failStart {
		return nil, errors.New("the script refused to start " + b.name)
	}
	s := &fakeSession{b: b, out: newMemPipe()}
	b.sess = s
	return s, nil
}

// send writes msg to the gateway on the current session.
func (b *fakeBackend) send(msg []byte) error {
	b.mu.Lock()
	s := b.sess
	b.mu.Unlock()
	if s == nil {
		return errors.New("no session")
	}
	s.out.Write(msg)
	return nil
}

// crash ends the current session's output: the gateway reads EOF.
func (b *fakeBackend) crash() {
	b.mu.Lock()
	s := b.sess
	b.sess = nil
	b.mu.Unlock()
	if s != nil {
		s.out.Close()
	}
}

func (s *fakeSession) Read(p []byte) (int, error) { return s.out.Read(p) }

// Write takes the gateway's lines: each is answered at once if the
// backend answers it by itself, else kept for the script.
func (s *fakeSession) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.part = append(s.part, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, bytes.Clone(s.part[:i]))
		s.part = s.part[i+1:]
	}
	s.mu.Unlock()
	for _, line := range lines {
		s.receive(line)
	}
	return len(p), nil
}

func (s *fakeSession) Close() error {
	s.out.Close()
	s.b.mu.Lock()
	if s.b.sess == s {
		s.b.sess = nil
	}
	s.b.mu.Unlock()
	return nil
}

// receive answers one message of the gateway, or keeps it for the script.
func (s *fakeSession) receive(line []byte) {
	b := s.b
	m, err := wire.Decode(line)
	b.mu.Lock()
	auto := err == nil && m.HasMethod && !b.manual["*"] && !b.manual[m.Method]
	var result json.RawMessage
	var errMsg []byte
	if auto {
		switch m.Method {
		case "notifications/initialized":
			b.mu.Unlock()
			return
		case "subscriptions/listen":
			// Open for as long as the session: changes are notifications.
			b.mu.Unlock()
			return
		case "initialize":
			result = b.surface["initialize"]
			if result == nil {
				result = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":` + b.capsLocked() + `,"serverInfo":{"name":"` + b.name + `","version":"1.0.0"}}`)
			}
		case "server/discover":
			result = b.surface["discover"]
			if result == nil {
				errMsg = wire.AppendError(nil, m.ID, -32601, "Method not found", nil)
			}
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			kind, key := strings.TrimSuffix(m.Method, "/list"), ""
			switch kind {
			case "resources/templates":
				kind, key = "templates", "resourceTemplates"
			default:
				key = kind
			}
			list := b.surface[kind]
			if list == nil {
				list = json.RawMessage(`[]`)
			}
			result = json.RawMessage(`{"` + key + `":` + string(list) + `}`)
		default:
			auto = false
		}
	}
	b.mu.Unlock()
	switch {
	case errMsg != nil:
		s.out.Write(append(errMsg, '\n'))
	case auto && m.ID != nil:
		s.out.Write(append(wire.AppendResult(nil, m.ID, result), '\n'))
	default:
		b.got.Write(append(line, '\n'))
	}
}

// capsLocked are the capabilities of a backend without an initialize
// file: tools, and what else its surface lists.
func (b *fakeBackend) capsLocked() string {
	caps := []string{`"tools":{"listChanged":true}`}
	if b.surface["prompts"] != nil {
		caps = append(caps, `"prompts":{"listChanged":true}`)
	}
	if b.surface["resources"] != nil || b.surface["templates"] != nil {
		caps = append(caps, `"resources":{"subscribe":true,"listChanged":true}`)
	}
	return "{" + strings.Join(caps, ",") + "}"
}

// memPipe is an in-memory pipe whose writes never wait: the reader waits
// on a channel of the test's bubble, so a wait is durable for synctest.
type memPipe struct {
	mu     sync.Mutex
	buf    []byte
	closed bool
	more   chan struct{} // capacity 1: something was written, or the pipe closed
}

func newMemPipe() *memPipe { return &memPipe{more: make(chan struct{}, 1)} }

func (p *memPipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return 0, io.ErrClosedPipe
	}
	p.buf = append(p.buf, b...)
	p.mu.Unlock()
	p.signal()
	return len(b), nil
}

func (p *memPipe) signal() {
	select {
	case p.more <- struct{}{}:
	default:
	}
}

func (p *memPipe) Read(b []byte) (int, error) {
	for {
		p.mu.Lock()
		if len(p.buf) > 0 {
			n := copy(b, p.buf)
			p.buf = p.buf[n:]
			p.mu.Unlock()
			return n, nil
		}
		if p.closed {
			p.mu.Unlock()
			return 0, io.EOF
		}
		p.mu.Unlock()
		<-p.more
	}
}

func (p *memPipe) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.signal()
	return nil
}

// msgQueue collects the messages written to it, line-delimited or
// Content-Length framed, to be taken one by one.
type msgQueue struct {
	mu     sync.Mutex
	part   []byte
	msgs   [][]byte
	framed []bool
}

func (q *msgQueue) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.part = append(q.part, p...)
	for {
		q.part = bytes.TrimLeft(q.part, " \t\r\n")
		if head, ok := bytes.CutPrefix(q.part, []byte("Content-Length:")); ok {
			end := bytes.Index(head, []byte("\r\n\r\n"))
			if end < 0 {
				return len(p), nil
			}
			n, err := strconv.Atoi(string(bytes.TrimSpace(head[:end])))
			if err != nil || len(head) < end+4+n {
				return len(p), nil
			}
			q.msgs = append(q.msgs, bytes.Clone(head[end+4:end+4+n]))
			q.framed = append(q.framed, true)
			q.part = head[end+4+n:]
			continue
		}
		i := bytes.IndexByte(q.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		q.msgs = append(q.msgs, bytes.Clone(bytes.TrimSpace(q.part[:i])))
		q.framed = append(q.framed, false)
		q.part = q.part[i+1:]
	}
}

// next takes the oldest message, and whether it came framed.
func (q *msgQueue) next() (msg []byte, framed, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 {
		return nil, false, false
	}
	m, f := q.msgs[0], q.framed[0]
	q.msgs, q.framed = q.msgs[1:], q.framed[1:]
	return m, f, true
}

// take takes the oldest message for which ok is true.
func (q *msgQueue) take(ok func(msg []byte, framed bool) bool) ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, m := range q.msgs {
		if ok(m, q.framed[i]) {
			q.msgs = slices.Delete(q.msgs, i, i+1)
			q.framed = slices.Delete(q.framed, i, i+1)
			return m, true
		}
	}
	return nil, false
}

// lockedBuffer is a bytes.Buffer for the log handler.
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
