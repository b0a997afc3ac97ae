package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mcp-gateway/mcp-gateway/backends/testutil" // Wine: t.TempDir's cleanup (testutil/wine.go)
)

// A rename that fails for a reason that does not pass is not tried again.
func TestRenameFailureNotRetried(t *testing.T) {
	calls := 0
	err := renameRetrying("a", "b", func(string, string) error {
		calls++
		return &os.LinkError{Op: "rename", Old: "a", New: "b", Err: fs.ErrNotExist}
	})
	if !errors.Is(err, fs.ErrNotExist) || calls != 1 {
		t.Fatalf("rename: %v after %d tries, want ErrNotExist at once", err, calls)
	}
}

// WriteFile replaces the file whole, with the permissions asked for.
func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	for _, s := range []string{"one", "two"} {
		if err := WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != s {
			t.Fatalf("after writing %q: %q, %v", s, b, err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".f.tmp-*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}
