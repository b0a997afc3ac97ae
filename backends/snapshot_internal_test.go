package backends

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var snapServer = config.Server{Name: "tb", Command: "testbackend", Args: []string{"-x"}, Enabled: true, Prefix: "tb", Restart: "on-failure"}

// snapSurface is a surface with one of everything.
func snapSurface() *surface {
	s := snapServer
	return &surface{
		protocol:     "2025-11-25",
		serverInfo:   &mcp.Implementation{Name: "tb", Version: "1"},
		caps:         serverCaps{tools: true, prompts: true, resources: true, logging: true, tasksList: true},
		capsRaw:      json.RawMessage(`{"tools":{"listChanged":true},"prompts":{},"resources":{},"logging":{},"tasks":{"list":{}}}`),
		instructions: "use it",
		lists: decodeLists(s,
			[]json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"},"n":12345678901234567890}`)},
			[]json.RawMessage{json.RawMessage(`{"name":"greet"}`)},
			[]json.RawMessage{json.RawMessage(`{"uri":"test://r1","name":"r1"}`)},
			[]json.RawMessage{json.RawMessage(`{"uriTemplate":"test://t/{id}","name":"t"}`)},
			nil),
	}
}

// A snapshot reads back as it was written: every definition byte for byte.
func TestSnapshotRoundTrip(t *testing.T) {
	in := snapSurface()
	in.lists.setMeta("tools/list", json.RawMessage(`{"k":1}`))
	data, err := encodeSnapshot(snapServer, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeSnapshot(data, snapServer)
	if err != nil {
		t.Fatal(err)
	}
	if out.caps != in.caps || out.instructions != in.instructions || out.protocol != in.protocol || out.serverInfo.Name != "tb" {
		t.Errorf("decoded %+v, want %+v", out, in)
	}
	if len(out.lists.tools) != 1 || !bytes.Equal(out.lists.tools[0].Raw, in.lists.tools[0].Raw) || out.lists.tools[0].Server != "tb" {
		t.Errorf("tools %+v", out.lists.tools)
	}
	if len(out.lists.prompts) != 1 || len(out.lists.resources) != 2 || !out.lists.resources[1].Template {
		t.Errorf("prompts %+v resources %+v", out.lists.prompts, out.lists.resources)
	}
	if string(out.lists.meta["tools/list"]) != `{"k":1}` {
		t.Errorf("meta %v", out.lists.meta)
	}
	again, _ := encodeSnapshot(snapServer, out)
	if !bytes.Equal(again, data) {
		t.Errorf("encoded again:\n%s\nwant\n%s", again, data)
	}
}

// A snapshot of another entry, of another format, or that does not decode
// is refused; definitions a backend could not have listed are dropped; the
// tool filter of the entry applies.
func TestSnapshotRefused(t *testing.T) {
	data, err := encodeSnapshot(snapServer, snapSurface())
	if err != nil {
		t.Fatal(err)
	}
	other := snapServer
	other.Args = []string{"-y"}
	if _, err := decodeSnapshot(data, other); err == nil {
		t.Errorf("decoded the snapshot of another entry")
	}
	var f map[string]any
	json.Unmarshal(data, &f)
	f["format"] = snapshotFormat + 1
	newer, _ := json.Marshal(f)
	if _, err := decodeSnapshot(newer, snapServer); err == nil {
		t.Errorf("decoded a snapshot of another format")
	}
	for _, bad := range []string{"", "{", "[]", `{"format":1}`, string(data[:len(data)-1])} {
		if _, err := decodeSnapshot([]byte(bad), snapServer); err == nil {
			t.Errorf("decoded %q", bad)
		}
	}
	f["format"] = snapshotFormat
	f["tools"] = []any{map[string]any{"name": "ok"}, map[string]any{"description": "no name"}, "text", 7}
	mixed, _ := json.Marshal(f)
	sf, err := decodeSnapshot(mixed, snapServer)
	if err != nil || len(sf.lists.tools) != 1 || sf.lists.tools[0].Name != "ok" {
		t.Errorf("mixed tools: %+v, %v", sf, err)
	}
	filtered := snapServer
	filtered.Tools.Exclude = []string{"echo"}
	encoded, _ := encodeSnapshot(filtered, snapSurface())
	if sf, err := decodeSnapshot(encoded, filtered); err != nil || len(sf.lists.tools) != 0 {
		t.Errorf("filtered: %+v, %v", sf, err)
	}
}

// A snapshot file over the bound is not read, and a save over the bound
// removes the old file rather than leave it stale.
func TestSnapshotBounded(t *testing.T) {
	dir := t.TempDir()
	data, _ := encodeSnapshot(snapServer, snapSurface())
	if err := saveSnapshot(dir, snapServer, data); err != nil {
		t.Fatal(err)
	}
	if sf, _, err := loadSnapshot(dir, snapServer); sf == nil || err != nil {
		t.Fatalf("load: %v, %v", sf, err)
	}
	big := append(bytes.Repeat([]byte(" "), maxSnapshot), data...)
	if err := os.WriteFile(snapshotPath(dir, snapServer), big, 0o600); err != nil {
		t.Fatal(err)
	}
	if sf, _, err := loadSnapshot(dir, snapServer); sf != nil || err == nil {
		t.Errorf("read a snapshot over the bound: %v", err)
	}
	if err := saveSnapshot(dir, snapServer, big); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snapshotPath(dir, snapServer)); !os.IsNotExist(err) {
		t.Errorf("a snapshot over the bound is kept: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left in the directory: %v", entries)
	}
	if filepath.Base(snapshotPath(dir, snapServer))[:3] != "tb-" {
		t.Errorf("file name %s", snapshotPath(dir, snapServer))
	}
}

// FuzzDecodeSnapshot: whatever a snapshot file holds, decoding it never
// panics, and what it accepts encodes and decodes again to the same.
func FuzzDecodeSnapshot(f *testing.F) {
	data, _ := encodeSnapshot(snapServer, snapSurface())
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte(`{"format":1,"key":"` + snapshotKey(snapServer) + `","server":"tb","tools":[{"name":"a"},{"x":1}],"capabilities":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := decodeSnapshot(b, snapServer)
		if err != nil {
			return
		}
		for _, tl := range sf.lists.tools {
			if tl.Name == "" || tl.Server != "tb" || !json.Valid(tl.Raw) {
				t.Fatalf("accepted tool %+v", tl)
			}
		}
		enc, err := encodeSnapshot(snapServer, sf)
		if err != nil {
			t.Fatalf("encode what was decoded: %v", err)
		}
		sf2, err := decodeSnapshot(enc, snapServer)
		if err != nil {
			t.Fatalf("decode what was encoded: %v\n%s", err, enc)
		}
		if len(sf2.lists.tools) != len(sf.lists.tools) || len(sf2.lists.resources) != len(sf.lists.resources) || sf2.caps != sf.caps {
			t.Fatalf("not stable:\n%+v\n%+v", sf, sf2)
		}
	})
}

// Pruning removes old snapshot files the gateway wrote, and nothing else
// of the directory: a cache directory that is a symlink to a shared one
// keeps its other *.json files, however old and however named.
func TestPruneOnlyOwnSnapshots(t *testing.T) {
	shared := t.TempDir()
	dir := filepath.Join(t.TempDir(), "snapshots")
	testutil.Symlink(t, shared, dir)
	other := snapServer
	other.Name = "gone"
	old, _ := encodeSnapshot(other, snapSurface())
	files := map[string][]byte{
		"notes.json":                               []byte(`{"mine":true}`),
		"tb-0123456789abcdef.json":                 []byte(`{"format":1,"key":"not the name's"}`),
		"x-" + strings.Repeat("a", 16) + ".json":   []byte(`[1]`),
		filepath.Base(snapshotPath(shared, other)): old,
	}
	then := time.Now().Add(-2 * snapshotMaxAge)
	for name, data := range files {
		p := filepath.Join(shared, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := encodeSnapshot(snapServer, snapSurface())
	if err := saveSnapshot(dir, snapServer, data); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(shared, name))
		if mine := name == filepath.Base(snapshotPath(shared, other)); mine != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v (%v)", name, os.IsNotExist(err), mine, err)
		}
	}
}
