package importer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// fuzzClients are the JSON styles FuzzParseJSON picks from.
var fuzzClients = []*Client{claudeDesktop, claudeCode, cursor, vscode, windsurf, genericJSON}

// FuzzParseJSON: the JSON parser never panics, a valid JSON file passes
// the comment stripper unchanged, and whatever it accepts becomes YAML
// that config.Load accepts. Seeds: testdata/fuzz/FuzzParseJSON.
func FuzzParseJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if json.Valid(data) && !bytes.Equal(stripJSONC(data), data) {
			t.Fatalf("stripJSONC changed valid JSON:\n%q\n%q", data, stripJSONC(data))
		}
		c := fuzzClients[int(which)%len(fuzzClients)]
		raws, err := parseJSON("fuzz.json", data, c, "/project")
		if err != nil {
			return
		}
		roundTrip(t, c, raws)
	})
}

// FuzzParseTOML is FuzzParseJSON for Codex's TOML. Seeds:
// testdata/fuzz/FuzzParseTOML.
func FuzzParseTOML(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		raws, err := parseTOML("fuzz.toml", data)
		if err != nil {
			return
		}
		roundTrip(t, codex, raws)
	})
}

// roundTrip checks that the entries render to YAML that loads, with every
// kept entry in it.
func roundTrip(t *testing.T, c *Client, raws []rawEntry) {
	if len(raws) > 20 {
		return // each entry is checked by a config.Load of its own
	}
	r := &Result{Client: c}
	vars := varContext{client: c, home: "/home/u", workspace: "/project"}
	for _, raw := range raws {
		r.Entries = append(r.Entries, raw.entry(vars))
	}
	r.finish()
	p := filepath.Join(t.TempDir(), "out.yaml")
	if err := os.WriteFile(p, r.YAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(config.LoadOptions{Path: p})
	if err != nil {
		t.Fatalf("imported YAML does not load: %v\n%s", err, r.YAML())
	}
	if len(cfg.Servers) != len(r.Entries) {
		t.Fatalf("loaded %d servers of %d", len(cfg.Servers), len(r.Entries))
	}
}
