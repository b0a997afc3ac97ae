package backends

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A backend's snapshot is what it looked like the last time it was ready:
// what it answered to initialize and its four lists. It is kept in a file
// per server under Options.SnapshotDir, written whenever the backend
// becomes ready or its lists change, and read when the backend is created,
// so that a client's initialize and first lists can be answered at once,
// while the backend is still starting (docs/design.md, "Never in the
// way"). The file is keyed by the server's whole configuration entry: an
// edited entry is a different server, and finds no snapshot.
//
// A snapshot is a hint, never a source of truth: it is shown only during a
// backend's first start, and the live lists replace it (clients are told
// by list_changed where they differ). A file that cannot be read, does not
// decode or does not match its entry is ignored with a warning.

// snapshotFormat changes whenever the file's meaning does: files of another
// format are ignored.
const snapshotFormat = 1

// maxSnapshot bounds a snapshot file. A backend whose snapshot would be
// larger gets none: tens of thousands of tools are better listed live than
// read from disk at every start.
const maxSnapshot = 8 << 20

// snapshotMaxAge is how long an unused snapshot file is kept: each save
// removes the files no gateway has written for that long (servers removed
// from every configuration, entries since edited).
const snapshotMaxAge = 30 * 24 * time.Hour

// surface is what a backend shows a client: what it answered to
// initialize and its lists.
type surface struct {
	protocol     string
	serverInfo   *mcp.Implementation
	caps         serverCaps
	capsRaw      json.RawMessage // as the backend wrote it
	instructions string
	lists        lists
}

// snapshotFile is a snapshot as stored: every definition as the backend
// wrote it.
type snapshotFile struct {
	Format       int                        `json:"format"`
	Key          string                     `json:"key"`
	Server       string                     `json:"server"`
	Protocol     string                     `json:"protocol_version,omitempty"`
	ServerInfo   *mcp.Implementation        `json:"server_info,omitempty"`
	Capabilities json.RawMessage            `json:"capabilities,omitempty"`
	Instructions string                     `json:"instructions,omitempty"`
	Tools        []json.RawMessage          `json:"tools"`
	Prompts      []json.RawMessage          `json:"prompts,omitempty"`
	Resources    []json.RawMessage          `json:"resources,omitempty"`
	Templates    []json.RawMessage          `json:"resource_templates,omitempty"`
	ListMeta     map[string]json.RawMessage `json:"list_meta,omitempty"`
}

// snapshotKey identifies a configuration entry: a hash of all of it but
// where it sits in its file, so that it holds no secret the entry names.
func snapshotKey(s config.Server) string {
	s.Source = ""
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain data
	}
	sum := sha256.Sum256(append(fmt.Appendf(nil, "%d\n", snapshotFormat), b...))
	return hex.EncodeToString(sum[:])
}

// snapshotPath is where server s's snapshot is kept under dir.
func snapshotPath(dir string, s config.Server) string {
	return filepath.Join(dir, s.Name+"-"+snapshotKey(s)[:16]+".json")
}

// encodeSnapshot is sf as stored for server s.
func encodeSnapshot(s config.Server, sf *surface) ([]byte, error) {
	f := snapshotFile{
		Format:       snapshotFormat,
		Key:          snapshotKey(s),
		Server:       s.Name,
		Protocol:     sf.protocol,
		ServerInfo:   sf.serverInfo,
		Capabilities: sf.capsRaw,
		Instructions: sf.instructions,
		Tools:        []json.RawMessage{},
		ListMeta:     sf.lists.meta,
	}
	for _, t := range sf.lists.tools {
		f.Tools = append(f.Tools, t.Raw)
	}
	for _, p := range sf.lists.prompts {
		f.Prompts = append(f.Prompts, p.Raw)
	}
	for _, r := range sf.lists.resources {
		if r.Template {
			f.Templates = append(f.Templates, r.Raw)
		} else {
			f.Resources = append(f.Resources, r.Raw)
		}
	}
	return wire.Marshal(f)
}

// decodeSnapshot reads a stored snapshot of server s. It fails for a file
// of another format or entry, and for definitions a backend could not have
// listed (decodeLists drops those).
func decodeSnapshot(data []byte, s config.Server) (*surface, error) {
	var f snapshotFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	switch {
	case f.Format != snapshotFormat:
		return nil, fmt.Errorf("format %d, want %d", f.Format, snapshotFormat)
	case f.Key != snapshotKey(s) || f.Server != s.Name:
		return nil, errors.New("written for another configuration entry")
	}
	caps, err := parseCaps(f.Capabilities)
	if err != nil {
		return nil, fmt.Errorf("capabilities: %w", err)
	}
	l := decodeLists(s, f.Tools, f.Prompts, f.Resources, f.Templates, nil)
	for i := range l.tools {
		l.tools[i].Snapshot = true
	}
	for method, m := range f.ListMeta {
		if isObject(m) {
			l.setMeta(method, m)
		}
	}
	return &surface{
		protocol:     f.Protocol,
		serverInfo:   f.ServerInfo,
		caps:         caps,
		capsRaw:      f.Capabilities,
		instructions: f.Instructions,
		lists:        l,
	}, nil
}

// loadSnapshot reads server s's snapshot from dir: nil when there is none,
// and an error, for a warning, when there is one that cannot be used.
func loadSnapshot(dir string, s config.Server) (*surface, []byte, error) {
	f, err := os.Open(snapshotPath(dir, s))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSnapshot+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > maxSnapshot {
		return nil, nil, fmt.Errorf("larger than %d MiB", maxSnapshot>>20)
	}
	sf, err := decodeSnapshot(data, s)
	if err != nil {
		return nil, nil, err
	}
	return sf, data, nil
}

// saveSnapshot writes data as server s's snapshot under dir, and removes
// snapshot files nobody wrote for snapshotMaxAge. A snapshot over
// maxSnapshot removes the old one instead: a stale snapshot is worse than
// none.
func saveSnapshot(dir string, s config.Server, data []byte) error {
	path := snapshotPath(dir, s)
	if len(data) > maxSnapshot {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	pruneSnapshots(dir, time.Now().Add(-snapshotMaxAge))
	return nil
}

// touchSnapshot marks server s's snapshot as in use (pruneSnapshots keeps
// it) without writing it again.
func touchSnapshot(dir string, s config.Server) {
	now := time.Now()
	_ = os.Chtimes(snapshotPath(dir, s), now, now)
}

// pruneSnapshots removes the snapshot files of dir last written before
// cutoff. Only files the gateway wrote go: regular files (not links) named
// SERVER-KEY.json whose content is a snapshot of that key. The directory
// may be shared (a cache directory linked to one), and its other files are
// not the gateway's to delete, whatever their names.
func pruneSnapshots(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) && ownSnapshot(path, e.Name()) {
			_ = os.Remove(path)
		}
	}
}

// ownSnapshot reports whether the file at path, named name, is a snapshot
// the gateway wrote: its key's first 16 digits are those its name ends with
// (snapshotPath).
func ownSnapshot(path, name string) bool {
	stem := strings.TrimSuffix(name, ".json")
	i := strings.LastIndexByte(stem, '-')
	if i < 0 || len(stem)-i-1 != 16 {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head struct {
		Key    string `json:"key"`
		Server string `json:"server"`
	}
	if json.NewDecoder(io.LimitReader(f, maxSnapshot+1)).Decode(&head) != nil {
		return false
	}
	return len(head.Key) == 64 && head.Key[:16] == stem[i+1:] && head.Server == stem[:i]
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// readSnapshot loads b's snapshot, if snapshots are kept; one that cannot
// be used is logged and ignored.
func (b *backend) readSnapshot() {
	dir := b.m.opts.SnapshotDir
	if dir == "" {
		return
	}
	sf, data, err := loadSnapshot(dir, b.cfg)
	if err != nil {
		b.log.Warn("ignored the backend's snapshot", "file", snapshotPath(dir, b.cfg), "err", err)
		return
	}
	if sf != nil {
		b.annotate(&sf.lists)
	}
	b.snap = sf
	if data != nil {
		b.snapSum = sha256.Sum256(data)
	}
}

// markSeen gives a backend without a snapshot an empty one once a wait for
// its first start has run out (Manager.Wait, WaitUnseen): the next run
// knows that this server kept someone waiting, and does not keep a client
// waiting for it again — whether it then became ready (and saveSnapshot
// replaced the file) or never did. A backend that was started and stopped
// again at once (a client that probes and starts the gateway anew) is not
// marked. b.snap, this run's view, is unchanged.
func (b *backend) markSeen() {
	dir := b.m.opts.SnapshotDir
	if dir == "" || b.snap != nil {
		return
	}
	b.saveMu.Lock()
	defer b.saveMu.Unlock()
	if b.snapSum != ([32]byte{}) {
		return
	}
	data, err := encodeSnapshot(b.cfg, &surface{})
	if err == nil {
		err = saveSnapshot(dir, b.cfg, data)
	}
	if err != nil {
		b.log.Warn("snapshot not saved", "err", err)
		return
	}
	b.snapSum = sha256.Sum256(data)
}

// saveSnapshot keeps what b shows now, while it is ready, as its snapshot,
// unless the file holds that already. Saves of one backend run one at a
// time, each with the lists current when it starts, so the last one
// written is the latest.
func (b *backend) saveSnapshot() {
	if b.parent != nil {
		// A caller's session: its lists are the caller's, never written
		// where the next run would show them to everyone.
		b.parent.publish(b)
		return
	}
	dir := b.m.opts.SnapshotDir
	if dir == "" {
		return
	}
	b.saveMu.Lock()
	defer b.saveMu.Unlock()
	b.mu.Lock()
	if b.state != Ready {
		b.mu.Unlock()
		return
	}
	sf := b.live // the lists are replaced on change, never modified
	b.mu.Unlock()
	var data []byte
	if sf.size() <= maxSnapshot {
		var err error
		if data, err = encodeSnapshot(b.cfg, &sf); err != nil {
			b.log.Warn("snapshot not saved", "err", err)
			return
		}
	}
	sum := sha256.Sum256(data)
	if sum == b.snapSum {
		touchSnapshot(dir, b.cfg)
		return
	}
	if err := saveSnapshot(dir, b.cfg, data); err != nil {
		b.log.Warn("snapshot not saved", "err", err)
		return
	}
	b.snapSum = sum
}

// size is about how many bytes sf's snapshot takes: its definitions'.
func (sf *surface) size() int {
	n := len(sf.capsRaw) + len(sf.instructions)
	for _, t := range sf.lists.tools {
		n += len(t.Raw)
	}
	for _, p := range sf.lists.prompts {
		n += len(p.Raw)
	}
	for _, r := range sf.lists.resources {
		n += len(r.Raw)
	}
	return n
}

// SnapshotTools returns the own names of the tools server's snapshot
// lists (what it had when last ready), or nil without one: what a one-shot
// command needs to know which server a tool name belongs to before any
// is started.
func (m *Manager) SnapshotTools(server string) []string {
	b := m.set.Load().byName[server]
	if b == nil || b.snap == nil {
		return nil
	}
	out := make([]string, 0, len(b.snap.lists.tools))
	for _, t := range b.snap.lists.tools {
		out = append(out, t.Name)
	}
	return out
}
