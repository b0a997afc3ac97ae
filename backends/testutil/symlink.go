package testutil

import (
	"os"
	"testing"
)

// Symlink makes link a symbolic link to target, or skips t where no link
// can be made, or — under Wine, whose 8.0 writes the Windows path into a
// Unix link — where the link made does not resolve (as one to a target
// that does not exist yet never does there).
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if _, err := os.Stat(link); err != nil && Wine {
		t.Skipf("the symbolic link made does not resolve (Wine 8.0 writes the Windows path into a Unix link): %v", err)
	}
}
