//go:build unix

package testutil

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// InChild runs the calling test again, alone, in a child process of the
// test binary with the environment variable name set, and fails t unless
// it passes there. It reports whether the caller is that child, which
// then does the work: a test that changes what belongs to the whole
// process (its open-file limit) must not do it in a binary it shares.
func InChild(t *testing.T, name string) bool {
	t.Helper()
	if os.Getenv(name) != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), name+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in a child process: %v\n%s", err, out)
	}
	return false
}

// ExhaustFiles lowers the process's open-file limit to 256 and opens
// files until no more can be: every later open, pipe or accept fails
// with EMFILE until release, which closes them and restores the limit.
// Only for a child process of its own (InChild).
func ExhaustFiles(t testing.TB) (release func()) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		held = append(held, f)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		for _, f := range held {
			f.Close()
		}
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	t.Cleanup(release)
	return release
}
