package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnmovedRefusesNewLinks: a path Prepare resolved that has become a
// symbolic link by the time the sandbox mode applies it (made by what
// is left of the server's last run) is refused, not granted where it
// now leads; the system's directories and /proc/self are links on
// purpose and pass.
func TestUnmovedRefusesNewLinks(t *testing.T) {
	dir := t.TempDir()
	notes, secret := filepath.Join(dir, "notes"), filepath.Join(dir, "secret")
	for _, d := range []string{notes, secret} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := Plan{FS: true, Read: append(systemDirs, notes), Write: []string{dir}}
	if err := unmoved(p); err != nil {
		t.Fatalf("before the link: %v", err)
	}
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, notes); err != nil {
		t.Fatal(err)
	}
	if err := unmoved(p); err == nil || !strings.Contains(err.Error(), notes+" now leads to "+secret) {
		t.Errorf("after the link: %v", err)
	}
}
