package secrets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	_ "github.com/mcp-gateway/mcp-gateway/backends/testutil" // under Wine: t.TempDir cleans up (see its wine.go)
)

// fileStore opens a file store in a temporary directory; the key apart
// from it, as the command places them.
func fileStore(t *testing.T, backend string) (*Store, Options) {
	t.Helper()
	root := t.TempDir()
	opts := Options{Backend: backend, Dir: filepath.Join(root, "config"), KeyFile: filepath.Join(root, "state", "secrets.key")}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, opts
}

// roundTrip sets, reads, lists, replaces and removes secrets in s.
func roundTrip(t *testing.T, s *Store) {
	t.Helper()
	const name, value = "github.GITHUB_TOKEN", "ghp_round-trip-value-Q7x"
	if _, err := s.Get(name); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "mcp-gateway secret set "+name) {
		t.Fatalf("Get of a secret never set: %v; want ErrNotFound naming `mcp-gateway secret set %s`", err, name)
	}
	for n, v := range map[string]string{name: value, "other.KEY": "multi\nline ünïcode ${HOME}"} {
		if err := s.Set(n, v); err != nil {
			t.Fatalf("Set %s: %v", n, err)
		}
	}
	for n, want := range map[string]string{name: value, "other.KEY": "multi\nline ünïcode ${HOME}"} {
		if got, err := s.Get(n); err != nil || got != want {
			t.Errorf("Get %s = %q, %v; want %q", n, got, err, want)
		}
	}
	if names, err := s.Names(); err != nil || !slices.Equal(names, []string{name, "other.KEY"}) {
		t.Errorf("Names = %q, %v", names, err)
	}
	if err := s.Set(name, value+"2"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(name); err != nil || got != value+"2" {
		t.Errorf("Get after a second Set = %q, %v", got, err)
	}
	if err := s.Delete(name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(name); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := s.Delete(name); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of a secret not set: %v", err)
	}
	if names, err := s.Names(); err != nil || !slices.Equal(names, []string{"other.KEY"}) {
		t.Errorf("Names after Delete = %q, %v", names, err)
	}
	if err := s.Delete("other.KEY"); err != nil {
		t.Fatal(err)
	}
}

// TestFileStore: the headless fallback keeps its secrets in a 0600 file
// under the configuration directory, sealed with a key kept in another
// directory; neither a value nor a name is in the clear, and the file does
// not open without its key.
func TestFileStore(t *testing.T) {
	s, opts := fileStore(t, File)
	if s.Backend() != File || s.Choice() != "chosen" {
		t.Errorf("backend %q (%s)", s.Backend(), s.Choice())
	}
	roundTrip(t, s)
	const value = "sk-file-store-VALUE-3141"
	if err := s.Set("svc.API_KEY", value); err != nil {
		t.Fatal(err)
	}
	enc := filepath.Join(opts.Dir, fileName)
	data, err := os.ReadFile(enc)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(value)) || bytes.Contains(data, []byte("svc.API_KEY")) {
		t.Errorf("%s holds a value or a name in the clear: %s", enc, data)
	}
	if runtime.GOOS != "windows" {
		for _, p := range []string{enc, opts.KeyFile} {
			if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, %v; want 0600", p, st.Mode().Perm(), err)
			}
		}
	}
	if filepath.Dir(opts.KeyFile) == opts.Dir {
		t.Fatal("the key is beside the file")
	}

	// Another key: the file does not open, and says with which key.
	other, _ := fileStore(t, File)
	if err := other.Set("x", "y"); err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(other.opts.KeyFile)
	if err := os.WriteFile(opts.KeyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("svc.API_KEY"); err == nil || !strings.Contains(err.Error(), "does not open with the key") {
		t.Errorf("Get under another key: %v", err)
	}
	// No key: an error naming it, and Set makes none over the old file.
	os.Remove(opts.KeyFile)
	if _, err := s.Get("svc.API_KEY"); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Errorf("Get without the key: %v", err)
	}
	if err := s.Set("svc.API_KEY", "new"); err == nil || exists(opts.KeyFile) {
		t.Errorf("Set without the key of an existing file: %v (key made: %v)", err, exists(opts.KeyFile))
	}
	// A damaged file.
	if err := os.WriteFile(enc, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Names(); err == nil {
		t.Error("Names of a damaged file: no error")
	}
}

// TestStoreBadInput: names outside [A-Za-z0-9._-], empty and oversized
// values, and an unknown backend are refused before anything is written.
func TestStoreBadInput(t *testing.T) {
	s, opts := fileStore(t, File)
	for _, name := range []string{"", "a b", "a/b", "a:b", "../x", strings.Repeat("n", 201), "ä"} {
		if err := s.Set(name, "v"); err == nil || !strings.Contains(err.Error(), "is not a secret's name") {
			t.Errorf("Set(%q): %v", name, err)
		}
		if _, err := s.Get(name); err == nil {
			t.Errorf("Get(%q): no error", name)
		}
	}
	if err := s.Set("a", ""); err == nil || !strings.Contains(err.Error(), "cannot be empty") {
		t.Errorf("empty value: %v", err)
	}
	if err := s.Set("a", strings.Repeat("v", MaxValue+1)); err == nil {
		t.Error("oversized value: no error")
	}
	if exists(opts.Dir) {
		t.Errorf("refused input created %s", opts.Dir)
	}
	if _, err := Open(Options{Backend: "vault", Dir: opts.Dir, KeyFile: opts.KeyFile}); err == nil {
		t.Error("Open of an unknown backend: no error")
	}
}

// TestAutoBackend: Auto keeps to the backend a store was written with, and
// without a keychain to ask (no D-Bus session bus) picks the file at once.
func TestAutoBackend(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a machine without a keychain is a Linux one without a D-Bus session bus")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	s, opts := fileStore(t, Auto)
	if s.Backend() != File || !strings.Contains(s.Choice(), "no D-Bus session bus") {
		t.Errorf("Auto without a bus: %s (%s)", s.Backend(), s.Choice())
	}
	if err := s.Set("a", "b"); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(opts)
	if err != nil || s2.Backend() != File || !strings.Contains(s2.Choice(), "encrypted file") {
		t.Errorf("Auto of a file store: %v %s (%s)", err, s2.Backend(), s2.Choice())
	}
	// A keychain store's index makes Auto keep to the keychain, even when
	// it does not answer now (its Get then says so, not "not set").
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, indexName), []byte(`{"backend":"keychain","names":["a"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(Options{Dir: dir, KeyFile: opts.KeyFile})
	if err != nil || s3.Backend() != Keychain {
		t.Errorf("Auto of a keychain store: %v %s (%s)", err, s3.Backend(), s3.Choice())
	}
}

// TestFiles: what a running gateway watches is what Set changes.
func TestFiles(t *testing.T) {
	s, opts := fileStore(t, File)
	if err := s.Set("a", "b"); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(Files(opts.Dir), exists) {
		t.Errorf("Set changed none of %q", Files(opts.Dir))
	}
}

// TestLookup: a running gateway's lookups see what another process set
// last, and a store never written is empty without a keychain probe.
func TestLookup(t *testing.T) {
	root := t.TempDir()
	opts := Options{Dir: filepath.Join(root, "config"), KeyFile: filepath.Join(root, "state", "key"), ProbeTimeout: 1}
	if _, err := Lookup(opts, "a"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "mcp-gateway secret set a") {
		t.Errorf("Lookup in no store: %v", err)
	}
	w := opts
	w.Backend = File
	s, err := Open(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"one", "two"} {
		if err := s.Set("a", v); err != nil {
			t.Fatal(err)
		}
		if got, err := Lookup(opts, "a"); err != nil || got != v {
			t.Errorf("Lookup = %q, %v; want %q", got, err, v)
		}
	}
}
