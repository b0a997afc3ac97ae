package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The build lock waits for a live holder and takes over from one that died.
func TestBuildLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin.lock")
	unlock, err := lock(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		u, err := lock(path)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	select {
	case <-got:
		t.Fatal("a second holder took the lock while the first held it")
	case <-time.After(200 * time.Millisecond): // a negative check: time must pass
	}
	unlock()
	(<-got)()

	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(dead.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	unlock, err = lock(path) // would wait forever if the dead holder were not noticed
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}
