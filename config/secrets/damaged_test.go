package secrets

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestFileStoreDamaged: a sealed file cut short (a crash, a full disk) or
// emptied is reported as damaged, saying what to do, not as another
// version; nothing is written over it; a file of a later version says so.
func TestFileStoreDamaged(t *testing.T) {
	s, opts := fileStore(t, File)
	if err := s.Set("a.KEY", "value-of-a-1234"); err != nil {
		t.Fatal(err)
	}
	enc := filepath.Join(opts.Dir, fileName)
	whole, err := os.ReadFile(enc)
	if err != nil {
		t.Fatal(err)
	}
	for what, data := range map[string][]byte{"cut short": whole[:len(whole)/2], "empty": nil} {
		if err := os.WriteFile(enc, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for op, err := range map[string]error{"Get": func() error { _, err := s.Get("a.KEY"); return err }(), "Set": s.Set("b.KEY", "other-value")} {
			if err == nil || !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "restore it") {
				t.Errorf("%s of a file %s: %v", op, what, err)
			}
		}
		if got, _ := os.ReadFile(enc); !bytes.Equal(got, data) {
			t.Errorf("Set wrote over a file %s", what)
		}
	}
	if err := os.WriteFile(enc, []byte(`{"version":2,"nonce":"","data":""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Names(); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("Names of a file of version 2: %v", err)
	}
}

// TestFileStoreKeyMode: a key that other users may read (mode 0644, a copy
// that lost its mode) is refused, saying how to fix it; the secrets are
// read again once it is 0600.
func TestFileStoreKeyMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows files have no Unix modes")
	}
	s, opts := fileStore(t, File)
	if err := s.Set("a.KEY", "value-of-a-1234"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(opts.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("a.KEY"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("Get with a key of mode 0644: %v", err)
	}
	if err := s.Set("b.KEY", "value-of-b-1234"); err == nil {
		t.Error("Set with a key of mode 0644 succeeded")
	}
	if err := os.Chmod(opts.KeyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get("a.KEY"); err != nil || v != "value-of-a-1234" {
		t.Errorf("Get with the key 0600 again: %q, %v", v, err)
	}
}

// TestStoreNotHiding: with secrets in the keychain (secrets.json names
// them), a first secret set in the file is refused, since Auto would then
// read the file only and lose sight of them; with the file store in use, a
// secret set in the keychain is refused, since it would never be read.
// Neither writes anything.
func TestStoreNotHiding(t *testing.T) {
	_, opts := fileStore(t, File)
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(opts.Dir, indexName)
	if err := os.WriteFile(index, []byte(`{"backend":"keychain","names":["a.KEY","b.KEY"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("c.KEY", "value-of-c-1234"); err == nil || !strings.Contains(err.Error(), "2 secrets are in the keychain") || !strings.Contains(err.Error(), EnvVar+"="+Keychain) {
		t.Errorf("Set in the file beside the keychain's secrets: %v", err)
	}
	if exists(filepath.Join(opts.Dir, fileName)) || exists(opts.KeyFile) {
		t.Error("the refused Set wrote the file or the key")
	}
	// Once the keychain's names are gone, the file is the store.
	if err := os.WriteFile(index, []byte(`{"backend":"keychain","names":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("c.KEY", "value-of-c-1234"); err != nil {
		t.Fatal(err)
	}
	kc := opts
	kc.Backend = Keychain
	k, err := Open(kc)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Set("d.KEY", "value-of-d-1234"); err == nil || !strings.Contains(err.Error(), EnvVar+"="+File) {
		t.Errorf("Set in the keychain beside the file: %v", err)
	}
}
