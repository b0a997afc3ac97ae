package backends

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/trust"
)

// The trust layer (docs/trust.md) decides here, where a backend's lists are
// made, which of its tool and prompt definitions clients see: every list
// (live or from a snapshot, over any transport, lazy mode's find_tools and
// describe_tool too) and every call reads what this file lets through, so
// a withheld definition is withheld everywhere at once. A definition is
// compared with its pin (the pin file, trust.File) by digest:
//
//   - the pinned digest: shown;
//   - another digest: withheld ("changed") until approved;
//   - no pin: under trust: pin shown and pinned ("first sight"; from a
//     snapshot, shown but pinned only once the backend lists it live);
//     under trust: approve withheld ("new") until approved;
//   - a pin file that cannot be read or vouched for: every definition of a
//     trusted server is withheld ("pins unreadable"): nothing that changed
//     is released by a damaged file.
//
// A call to a withheld tool, or prompts/get of a withheld prompt, fails
// with a *WithheldError. Definitions are also scanned for injection
// markers (trust.Scan): the hits are reported, and logged once.

// TrustOptions configure the trust layer.
type TrustOptions struct {
	// Policy applies to every server without a trust of its own: "pin",
	// "approve", or "off" ("" is off).
	Policy string
	// PinFile is the pin file; "" keeps pins in memory only.
	PinFile string
	// Watch re-reads the pin file when another process changes it (mcp-
	// gateway approve), so that an approved definition is shown at once.
	Watch bool
}

// The reasons a definition is withheld.
const (
	WithheldChanged    = "changed"         // its digest is not the pinned one
	WithheldNew        = "new"             // trust: approve, and not approved yet
	WithheldUnreadable = "pins unreadable" // the pin file cannot be used
)

// Finding is a hit of the definition scanner: Rule, Where (the member) and
// Excerpt.
type Finding = trust.Finding

// Change is a definition the trust layer withholds, with what it was
// pinned as.
type Change struct {
	Server     string          `json:"server"`
	Kind       string          `json:"kind"` // "tool" or "prompt"
	Name       string          `json:"name"` // the backend's own name
	Reason     string          `json:"reason"`
	Digest     string          `json:"digest"`           // the definition's now
	Pinned     string          `json:"pinned,omitempty"` // the pinned digest, when there is one
	Definition json.RawMessage `json:"definition"`       // canonical (trust.Definition)
	Previous   json.RawMessage `json:"previous,omitempty"`
	Diff       string          `json:"diff"` // Previous → Definition, lines
	Findings   []Finding       `json:"findings,omitempty"`
}

// Flagged is a definition the scanner has hits in, withheld or not.
type Flagged struct {
	Server   string    `json:"server"`
	Kind     string    `json:"kind"`
	Name     string    `json:"name"`
	Withheld bool      `json:"withheld"`
	Findings []Finding `json:"findings"`
}

// WithheldError is the error of a call to a withheld tool (or prompts/get
// of a withheld prompt). The gateway maps it to -32003.
type WithheldError struct {
	Server string
	Kind   string // "tool" or "prompt"
	Name   string // the backend's own name
	Reason string
	Digest string // the withheld definition's, as this gateway sees it
}

func (e *WithheldError) Error() string {
	var why string
	switch e.Reason {
	case WithheldChanged:
		why = "its definition changed since it was approved"
	case WithheldNew:
		why = "it is new and waits for approval (trust: approve)"
	default:
		why = "the pin file cannot be read, so nothing that may have changed is released"
	}
	return fmt.Sprintf("%s '%s' of MCP server '%s' is withheld: %s; review it with `mcp-gateway tools --changes` and accept it with `%s`",
		e.Kind, e.Name, e.Server, why, ApproveCommand(e.Server, e.Name, e.Digest))
}

// ApproveCommand is the command that accepts a withheld definition: the
// one of digest, so that what is approved is what was reviewed, not
// whatever the server lists when the command runs (approve refuses a NAME
// without --digest).
func ApproveCommand(server, name, digest string) string {
	cmd := "mcp-gateway approve " + server
	if name != "" { // a server's instructions have none
		cmd += " " + name
	}
	return cmd + " --digest " + strings.TrimPrefix(digest, "sha256:")
}

// defInfo is what the trust layer knows of one definition: computed once
// per listing, outside any lock (annotate), and carried with the Tool or
// Prompt.
type defInfo struct {
	def      trust.Definition // canonical
	digest   string
	findings []Finding
}

func newDefInfo(kind trust.Kind, raw json.RawMessage) *defInfo {
	def, err := trust.Canonical(kind, raw)
	if err != nil {
		// Lists only hold objects with a name, which have a canonical
		// form; this keeps a digest of the bytes should one not.
		def = trust.Definition(raw)
	}
	return &defInfo{def: def, digest: def.Digest(), findings: trust.Scan(kind, raw)}
}

// trusted reports whether the trust layer applies to b's definitions.
func (b *backend) trusted() bool {
	return b.m.trust.policyOf(b.cfg.Trust) != "off"
}

// snapshotShowsNoTool reports whether b's snapshot, under trust, shows
// none of its tools: no pin knows any (a snapshot written beside another
// pin file, or pins deleted). Such a backend is waited for as one never
// seen (WaitUnseen), instead of answered at once with no tools.
func (b *backend) snapshotShowsNoTool() bool {
	sf := b.snap
	if sf == nil || len(sf.lists.tools) == 0 || !b.trusted() {
		return false
	}
	ts := b.m.trust
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.err != nil {
		return false // every definition is withheld while the pins cannot be read; waiting shows none either
	}
	for _, t := range sf.lists.tools {
		if ts.pinLocked(pinKey{b.cfg.Name, trust.Tool, t.Name}) != nil {
			return false
		}
	}
	return true
}

// annotate computes the digest and the scanner's findings of every tool
// and prompt of l, a listing of b, when b is trusted.
func (b *backend) annotate(l *lists) {
	if !b.trusted() {
		return
	}
	for i := range l.tools {
		l.tools[i].def = newDefInfo(trust.Tool, l.tools[i].Raw)
	}
	for i := range l.prompts {
		l.prompts[i].def = newDefInfo(trust.Prompt, l.prompts[i].Raw)
	}
}

// trustView is what clients are shown of one surface of a backend under
// the pins of one generation.
type trustView struct {
	tools   *Tool // the first tool of the lists it was made of (identity)
	ntools  int
	prompts *Prompt
	nprompt int
	instr   string // the instructions it was made of
	gen     uint64
	valid   bool

	shownTools   []Tool          // the tools shown: without the withheld ones
	shownPrompts []Prompt        // likewise
	instructions string          // the instructions shown: the pinned ones, or none, while they are withheld
	instrInfo    *defInfo        // the digest and findings of instr, nil for none
	held         []heldDef       // the withheld ones, in listing order
	by           map[heldKey]int // index in held
}

type heldKey struct {
	kind trust.Kind
	name string
}

type heldDef struct {
	kind   trust.Kind
	name   string
	reason string
	info   *defInfo
	pin    *trust.Pin // the pin it differs from, if any
}

func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// trustedLocked is what clients are shown of surface sf of b: its lists
// without the withheld definitions. b.mu is held.
func (b *backend) trustedLocked(sf *surface) *trustView {
	ts := b.m.trust
	v := &b.view
	gen := ts.gen.Load()
	if v.valid && v.gen == gen && v.tools == first(sf.lists.tools) && v.ntools == len(sf.lists.tools) &&
		v.prompts == first(sf.lists.prompts) && v.nprompt == len(sf.lists.prompts) && v.instr == sf.instructions {
		return v
	}
	*v = ts.evaluate(b, sf, gen)
	return v
}

// shownInstructionsLocked is sf's instructions as clients are shown them.
// b.mu is held.
func (b *backend) shownInstructionsLocked(sf *surface) string {
	if !b.trusted() {
		return sf.instructions
	}
	return b.trustedLocked(sf).instructions
}

// shownListsLocked is sf's lists as clients are shown them. b.mu is held.
func (b *backend) shownListsLocked(sf *surface) *lists {
	if !b.trusted() {
		return &sf.lists
	}
	v := b.trustedLocked(sf)
	l := sf.lists
	l.tools, l.prompts = v.shownTools, v.shownPrompts
	return &l
}

// withheld returns the error of a call to b's tool (or prompt) name when
// its definition is withheld, else nil. Called on the call path: a server
// without trust costs one comparison.
func (b *backend) withheld(kind trust.Kind, name string) error {
	if !b.trusted() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	sf := b.shownLocked()
	if sf == nil {
		return nil
	}
	v := b.trustedLocked(sf)
	if i, ok := v.by[heldKey{kind, name}]; ok {
		return &WithheldError{Server: b.cfg.Name, Kind: string(kind), Name: name, Reason: v.held[i].reason, Digest: v.held[i].info.digest}
	}
	return nil
}

// trustState is the Manager's side of the trust layer: the pins, and the
// writer of first sights.
type trustState struct {
	opts TrustOptions
	log  *slog.Logger
	m    *Manager
	gen  atomic.Uint64 // bumped whenever the pins (or their error) change

	mu     sync.Mutex
	file   *trust.File           // the pin file as last read; nil while err
	err    error                 // why the pin file cannot be used
	sum    [32]byte              // the hash of file's encoding, to tell a reload that changes nothing
	local  map[pinKey]*trust.Pin // first sights not in the file (yet, or for good when it cannot be written)
	queue  map[pinKey]*trust.Pin // first sights to write
	logged map[string]bool       // what was logged once: "server\x00kind\x00name\x00digest\x00what"
	wake   chan struct{}         // capacity 1: the writer has work
	stop   chan struct{}
	done   chan struct{}
}

type pinKey struct {
	server string
	kind   trust.Kind
	name   string
}

func newTrustState(m *Manager, opts TrustOptions, log *slog.Logger) *trustState {
	ts := &trustState{opts: opts, log: log, m: m,
		local: map[pinKey]*trust.Pin{}, queue: map[pinKey]*trust.Pin{}, logged: map[string]bool{}, wake: make(chan struct{}, 1)}
	ts.file = &trust.File{}
	if opts.PinFile != "" {
		ts.reload()
	}
	return ts
}

// policyOf is the policy of a server whose own trust is own.
func (ts *trustState) policyOf(own string) string {
	p := cmp.Or(own, ts.opts.Policy)
	if p == "" {
		return "off"
	}
	return p
}

// reload reads the pin file again, and reports whether what it holds
// changed.
func (ts *trustState) reload() bool {
	f, err := trust.Load(ts.opts.PinFile)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.setFileLocked(f, err)
}

// setFileLocked records the pin file's contents (or why it cannot be
// used) and bumps the generation when they changed. ts.mu is held.
//
// A pin this gateway has held is never forgotten while it runs, and only
// an approval replaces it: a file that lacks it — deleted, recreated,
// emptied, or damaged and then moved away — or that pins another
// definition as a first sight (another gateway's, started meanwhile)
// would otherwise release a withheld change. Such pins stay in force from
// memory (ts.local); those the file lacks are written back.
func (ts *trustState) setFileLocked(f *trust.File, err error) bool {
	if err != nil {
		changed := ts.err == nil || ts.err.Error() != err.Error()
		if changed {
			ts.log.Error("the pin file cannot be used: every tool and prompt definition of a server with trust: pin or approve is withheld until it is repaired or removed", "file", ts.opts.PinFile, "err", err)
			ts.gen.Add(1)
		}
		ts.keepLocked(nil)
		ts.file, ts.err = nil, err
		return changed
	}
	data, _ := f.Encode()
	sum := sha256.Sum256(data)
	changed := ts.err != nil || sum != ts.sum
	if ts.err != nil {
		ts.log.Info("the pin file can be used again", "file", ts.opts.PinFile)
	}
	ts.keepLocked(f)
	ts.file, ts.err, ts.sum = f, nil, sum
	lost, other := 0, 0
	for k, p := range ts.local {
		switch q := ts.file.Pins(k.server, k.kind)[k.name]; {
		case q != nil && (q.Digest == p.Digest || q.How == trust.Approved):
			delete(ts.local, k) // the file has it now, or an approval replaced it
		case q != nil:
			other++ // pinned otherwise at first sight: this gateway keeps its own
		case ts.opts.PinFile != "":
			if ts.queue[k] == nil {
				lost++
			}
			ts.queue[k] = p
		}
	}
	if lost > 0 {
		ts.log.Warn("the pin file lacks pins this gateway holds: they stay in force, and are written back", "file", ts.opts.PinFile, "count", lost)
		select {
		case ts.wake <- struct{}{}:
		default:
		}
	}
	if other > 0 {
		ts.log.Warn("the pin file pins definitions otherwise than this gateway, not by an approval: it keeps its own pins", "file", ts.opts.PinFile, "count", other)
	}
	if changed {
		ts.gen.Add(1)
	}
	return changed
}

// keepLocked moves the pins of the file as last read that next (nil: a
// file that cannot be used) lacks, or replaces otherwise than by an
// approval, into ts.local, so that they stay in force. ts.mu is held.
func (ts *trustState) keepLocked(next *trust.File) {
	if ts.file == nil {
		return
	}
	for server := range ts.file.Servers {
		for _, kind := range trust.Kinds {
			for name, p := range ts.file.Pins(server, kind) {
				k := pinKey{server, kind, name}
				q := next.Pins(server, kind)[name]
				if (q == nil || q.Digest != p.Digest && q.How != trust.Approved) && ts.local[k] == nil {
					ts.local[k] = p
				}
			}
		}
	}
}

// pinLocked is the pin of a definition, if any: this gateway's own first
// (setFileLocked keeps only those the file does not hold or approve).
// ts.mu is held.
func (ts *trustState) pinLocked(k pinKey) *trust.Pin {
	if p := ts.local[k]; p != nil {
		return p
	}
	return ts.file.Pins(k.server, k.kind)[k.name]
}

// evaluate makes the view of surface sf of b under the pins of generation
// gen (or later). b.mu is held; ts.mu is taken inside it, never the other
// way round.
func (ts *trustState) evaluate(b *backend, sf *surface, gen uint64) trustView {
	v := trustView{tools: first(sf.lists.tools), ntools: len(sf.lists.tools), prompts: first(sf.lists.prompts),
		nprompt: len(sf.lists.prompts), instr: sf.instructions, gen: gen, valid: true, by: map[heldKey]int{}}
	// The instructions are judged as a definition: a change is withheld,
	// and they are scanned.
	if strings.TrimSpace(sf.instructions) != "" {
		v.instrInfo = newDefInfo(trust.Instructions, trust.InstructionsObject(sf.instructions))
	}
	policy := ts.policyOf(b.cfg.Trust)
	server := b.cfg.Name
	var firstSights []pinKey
	var newlyHeld []string // logged in one record
	var aliases map[trust.Kind]map[string]*trust.Pin
	ts.mu.Lock()
	judge := func(kind trust.Kind, name string, info *defInfo) bool {
		if info == nil {
			return true // listed before the server was trusted
		}
		if len(info.findings) > 0 {
			ts.logOnceLocked(server, kind, name, info.digest, "findings", func() {
				ts.log.Warn("definition has injection markers", "server", server, "kind", kind, "name", name, "findings", info.findings)
			})
		}
		k := pinKey{server, kind, name}
		var h heldDef
		if ts.err != nil {
			h = heldDef{kind: kind, name: name, reason: WithheldUnreadable, info: info}
		} else if pin := ts.pinLocked(k); pin != nil {
			if pin.Digest == info.digest {
				return true
			}
			h = heldDef{kind: kind, name: name, reason: WithheldChanged, info: info, pin: pin}
		} else if sf != &b.live {
			// A snapshot's definition no pin knows is not shown, nor
			// held for approval: the file is only a cache, which anyone
			// who can write it could fill. It is shown (and pinned) once
			// the backend itself lists it.
			return false
		} else if alias := ts.aliasLocked(&aliases, kind, server, name); alias != nil {
			// A new name that is a pinned one's but for characters a
			// client's name cannot carry ("a+b" and "a_b") would be, or
			// come to be, shown under the pinned one's name: it is a
			// change of it, and waits for approval as one (under
			// approve too, so that the reviewer sees what it replaces).
			h = heldDef{kind: kind, name: name, reason: WithheldChanged, info: info, pin: alias}
		} else if policy == "approve" {
			h = heldDef{kind: kind, name: name, reason: WithheldNew, info: info}
		} else {
			p := &trust.Pin{Digest: info.digest, Definition: info.def, Pinned: time.Now().UTC().Truncate(time.Second), How: trust.FirstSight}
			ts.local[k] = p
			if ts.opts.PinFile != "" {
				ts.queue[k] = p
				firstSights = append(firstSights, k)
			}
			return true
		}
		if _, dup := v.by[heldKey{kind, name}]; !dup {
			v.by[heldKey{kind, name}] = len(v.held)
			v.held = append(v.held, h)
		}
		if h.reason != WithheldUnreadable {
			ts.logOnceLocked(server, kind, name, info.digest, "held", func() {
				newlyHeld = append(newlyHeld, string(kind)+" "+name+" ("+h.reason+")")
			})
		}
		return false
	}
	for _, t := range sf.lists.tools {
		if judge(trust.Tool, t.Name, t.def) {
			v.shownTools = append(v.shownTools, t)
		}
	}
	for _, p := range sf.lists.prompts {
		if judge(trust.Prompt, p.Name, p.def) {
			v.shownPrompts = append(v.shownPrompts, p)
		}
	}
	if v.instrInfo != nil {
		if judge(trust.Instructions, "", v.instrInfo) {
			v.instructions = sf.instructions
		} else if i, ok := v.by[heldKey{trust.Instructions, ""}]; ok && v.held[i].pin != nil {
			// Withheld: what was approved. A snapshot's unpinned
			// instructions are not held (judge), and none are shown.
			v.instructions = v.held[i].pin.Definition.InstructionsText()
		}
	}
	ts.mu.Unlock()
	if len(newlyHeld) > 0 {
		const most = 10
		count, more := len(newlyHeld), ""
		if len(newlyHeld) > most {
			more = fmt.Sprintf(" and %d more", len(newlyHeld)-most)
			newlyHeld = newlyHeld[:most]
		}
		approve := "mcp-gateway approve " + server + " NAME --digest DIGEST (as tools --changes shows it)"
		ts.log.Warn("definitions withheld until approved", "server", server, "count", count,
			"definitions", strings.Join(newlyHeld, ", ")+more, "review", "mcp-gateway tools --changes", "approve", approve)
	}
	if len(firstSights) > 0 {
		select {
		case ts.wake <- struct{}{}:
		default:
		}
	}
	return v
}

// aliasLocked returns the pin of another definition of server, of kind,
// whose name is name's but for characters outside a strict client's
// alphabet ([A-Za-z0-9_-], the gateway's names replace the others with
// "_"): both want one front name. Whichever way round, and whether or not
// the pinned one is still shown, a new name like that takes, or may come
// to take, the name the pinned one was shown under ("a+b" once "a_b" is
// gone or withheld; "a_b", which has the name as it is, from "a+b" at
// once; "a+b" beside "a_b", once "a_b" goes): it is a change of that pin.
// aliases caches, for one evaluation, the pins by that form. ts.mu is
// held.
func (ts *trustState) aliasLocked(aliases *map[trust.Kind]map[string]*trust.Pin, kind trust.Kind, server, name string) *trust.Pin {
	if *aliases == nil {
		*aliases = make(map[trust.Kind]map[string]*trust.Pin)
	}
	forms, ok := (*aliases)[kind]
	if !ok {
		forms = make(map[string]*trust.Pin)
		owns := make(map[string]string) // by form: the own name of its pin
		add := func(own string, p *trust.Pin) {
			// Of several pins of one form, the first by name: the diff
			// shown does not change from one evaluation to the next.
			f := clientSafe(own)
			if o, dup := owns[f]; !dup || own < o {
				forms[f], owns[f] = p, own
			}
		}
		for own, p := range ts.file.Pins(server, kind) {
			add(own, p)
		}
		for k, p := range ts.local {
			if k.server == server && k.kind == kind {
				add(k.name, p)
			}
		}
		(*aliases)[kind] = forms
	}
	return forms[clientSafe(name)]
}

// clientSafe is name in a strict client's alphabet, as the gateway's names
// (gateway/names.go) make it.
func clientSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// logOnceLocked runs log the first time what happens to a definition.
// ts.mu is held.
func (ts *trustState) logOnceLocked(server string, kind trust.Kind, name, digest, what string, log func()) {
	key := strings.Join([]string{server, string(kind), name, digest, what}, "\x00")
	if !ts.logged[key] {
		ts.logged[key] = true
		log()
	}
}

// start runs the writer of first sights and, with Watch, the pin file's
// watcher, until close.
func (ts *trustState) start() {
	if ts.opts.PinFile == "" || ts.stop != nil {
		return
	}
	ts.stop, ts.done = make(chan struct{}), make(chan struct{})
	var events <-chan struct{}
	var stopWatch func()
	if ts.opts.Watch {
		events, stopWatch = watchFile(ts.opts.PinFile, ts.log)
	}
	go func() {
		defer close(ts.done)
		if stopWatch != nil {
			defer stopWatch()
		}
		for {
			select {
			case <-ts.stop:
				ts.write()
				return
			case <-ts.wake:
				ts.write()
			case <-events:
				if ts.reload() {
					ts.notify("")
				}
			}
		}
	}()
}

// close writes the first sights still queued and stops the writer.
func (ts *trustState) close() {
	if ts.stop == nil {
		ts.write() // never started: a command that only listed
		return
	}
	close(ts.stop)
	<-ts.done
}

// write adds the queued first sights to the pin file. A definition the
// file pins already (another process saw it first, or approved another)
// is not replaced; the view follows the file's pin when it is an
// approval or the same, and keeps this gateway's own otherwise
// (setFileLocked).
func (ts *trustState) write() {
	ts.mu.Lock()
	queue := ts.queue
	ts.queue = map[pinKey]*trust.Pin{}
	broken := ts.err != nil
	ts.mu.Unlock()
	if len(queue) == 0 || broken || ts.opts.PinFile == "" {
		return
	}
	f, err := trust.Update(ts.opts.PinFile, func(f *trust.File) bool {
		changed := false
		for k, p := range queue {
			if f.Pins(k.server, k.kind)[k.name] == nil {
				changed = f.Set(k.server, k.kind, k.name, p) || changed
			}
		}
		return changed
	})
	if err != nil {
		ts.log.Warn("first sights of definitions not recorded: they are trusted in this run only", "file", ts.opts.PinFile, "err", err)
		return
	}
	ts.mu.Lock()
	changed := ts.setFileLocked(f, nil)
	ts.mu.Unlock()
	if changed {
		ts.notify("")
	}
}

// notify tells the gateway that what server (every trusted server when
// "") shows may have changed.
func (ts *trustState) notify(server string) {
	m := ts.m
	m.mu.Lock()
	n := m.notify
	m.mu.Unlock()
	for _, b := range m.backends() {
		if (server == "" || b.cfg.Name == server) && b.trusted() {
			n.changed(b.cfg.Name)
		}
	}
}

// Trust is a Manager's trust layer as its owner sees it (docs/trust.md):
// what it withholds and why, what the scanner flagged, the pin file, and
// approval. Its methods are safe for concurrent use.
type Trust struct{ m *Manager }

// Trust returns the Manager's trust layer.
func (m *Manager) Trust() Trust { return Trust{m} }

// Changes returns every definition withheld now, of every backend clients
// are shown, in configuration and listing order, each with the diff from
// its pin.
func (t Trust) Changes() []Change {
	var out []Change
	for _, b := range t.m.backends() {
		if !b.trusted() {
			continue
		}
		b.mu.Lock()
		var held []heldDef
		if sf := b.shownLocked(); sf != nil {
			held = slices.Clone(b.trustedLocked(sf).held)
		}
		b.mu.Unlock()
		for _, h := range held {
			out = append(out, change(b.cfg.Name, h))
		}
	}
	return out
}

func change(server string, h heldDef) Change {
	c := Change{Server: server, Kind: string(h.kind), Name: h.name, Reason: h.reason, Digest: h.info.digest,
		Definition: json.RawMessage(h.info.def), Findings: h.info.findings}
	var prev trust.Definition
	if h.pin != nil {
		c.Pinned, c.Previous, prev = h.pin.Digest, json.RawMessage(h.pin.Definition), h.pin.Definition
	}
	c.Diff = trust.Diff(prev, h.info.def)
	return c
}

// Flagged returns every definition clients are shown or that is withheld
// in which the scanner found injection markers.
func (t Trust) Flagged() []Flagged {
	var out []Flagged
	for _, b := range t.m.backends() {
		if !b.trusted() {
			continue
		}
		b.mu.Lock()
		if sf := b.shownLocked(); sf != nil {
			v := b.trustedLocked(sf)
			add := func(kind trust.Kind, name string, info *defInfo) {
				if info != nil && len(info.findings) > 0 {
					_, held := v.by[heldKey{kind, name}]
					out = append(out, Flagged{Server: b.cfg.Name, Kind: string(kind), Name: name, Withheld: held, Findings: info.findings})
				}
			}
			for _, t := range sf.lists.tools {
				add(trust.Tool, t.Name, t.def)
			}
			for _, p := range sf.lists.prompts {
				add(trust.Prompt, p.Name, p.def)
			}
			add(trust.Instructions, "", v.instrInfo)
		}
		b.mu.Unlock()
	}
	return out
}

// Err reports why the pin file cannot be used, or nil.
func (t Trust) Err() error {
	t.m.trust.mu.Lock()
	defer t.m.trust.mu.Unlock()
	return t.m.trust.err
}

// PinFile is the pin file the Manager reads and writes ("" for none).
func (t Trust) PinFile() string { return t.m.trust.opts.PinFile }

// Approve pins, as approved, the current definition of each withheld
// change of server that accept accepts, and shows it at once (clients get
// list_changed). It returns what it approved; nothing to approve is no
// error. It fails, approving nothing, when the pin file cannot be read or
// written.
func (t Trust) Approve(server string, accept func(Change) bool) ([]Change, error) {
	var picked []Change
	for _, c := range t.Changes() {
		if c.Server == server && accept(c) {
			picked = append(picked, c)
		}
	}
	if len(picked) == 0 {
		return nil, nil
	}
	ts := t.m.trust
	now := time.Now().UTC().Truncate(time.Second)
	pinOf := func(c Change) *trust.Pin {
		return &trust.Pin{Digest: c.Digest, Definition: trust.Definition(c.Definition), Pinned: now, How: trust.Approved}
	}
	if ts.opts.PinFile == "" {
		ts.mu.Lock()
		if ts.err == nil {
			for _, c := range picked {
				ts.local[pinKey{server, trust.Kind(c.Kind), c.Name}] = pinOf(c)
			}
			ts.gen.Add(1)
		}
		ts.mu.Unlock()
	} else {
		f, err := trust.Update(ts.opts.PinFile, func(f *trust.File) bool {
			for _, c := range picked {
				f.Set(server, trust.Kind(c.Kind), c.Name, pinOf(c))
			}
			return true
		})
		ts.mu.Lock()
		if err != nil {
			// A file that cannot be vouched for is reported as such.
			if _, lerr := trust.Load(ts.opts.PinFile); lerr != nil {
				ts.setFileLocked(nil, lerr)
			}
			ts.mu.Unlock()
			return nil, err
		}
		ts.setFileLocked(f, nil)
		ts.mu.Unlock()
	}
	for _, c := range picked {
		ts.log.Info("definition approved", "server", server, "kind", c.Kind, "name", c.Name, "digest", c.Digest)
	}
	ts.notify(server)
	return picked, nil
}

// ShortDigest is a digest as people compare it: its first 12 hex digits.
func ShortDigest(d string) string {
	h := strings.TrimPrefix(d, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	if _, err := hex.DecodeString(h); err != nil {
		return d
	}
	return h
}

// Withheld returns the WithheldError of server's tool (kind "tool") or
// prompt ("prompt") name when the trust layer withholds it, else nil.
func (t Trust) Withheld(server, kind, name string) error {
	b := t.m.set.Load().byName[server]
	if b == nil {
		return nil
	}
	return b.withheld(trust.Kind(kind), name)
}
