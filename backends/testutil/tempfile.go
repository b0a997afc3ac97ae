package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TempFile writes text to a file named name in a new temporary directory
// of the test (removed when it ends), and returns its path.
func TempFile(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
