package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A file another process has open (opened as Go opens files, without
// FILE_SHARE_DELETE) cannot be replaced on Windows: the rename is tried
// again and succeeds once the reader has closed it.
func TestRenameWhileAnotherHasItOpen(t *testing.T) {
	dir := t.TempDir()
	path, tmp := filepath.Join(dir, "f.json"), filepath.Join(dir, "f.json.tmp")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	calls := 0
	err = renameRetrying(tmp, path, func(from, to string) error {
		calls++
		err := os.Rename(from, to)
		if calls == 1 {
			if !inUse(err) {
				t.Fatalf("replacing a file another has open: %v, want it refused as in use", err)
			}
			reader.Close()
		}
		return err
	})
	if err != nil || calls != 2 {
		t.Fatalf("rename: %v after %d tries, want success at the second", err, calls)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("file holds %q, want new", b)
	}
}
