package testutil

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// BuildOptions say how Build builds a binary. It is built with -race when
// the tests run with -race (Race), so that end-to-end runs catch data races
// in the binaries too.
type BuildOptions struct {
	// Script, if set, builds with this script of the module (relative to
	// its root) called as `SCRIPT OUTPUT [go build flags]`, the way
	// releases are built; else `go build -o OUTPUT PKG`.
	Script string
}

// Build returns the path of the binary of pkg (a path relative to the
// module root, "./backends/testbackend"), built or brought up to date. The
// binary is kept in the temporary directory, one per module tree and
// options, and go build itself decides whether it is up to date (it
// compares the build ID recorded in the binary with its sources and
// flags), so that every test binary of one `go test ./...` run — and later
// runs over the same sources — share one link instead of each linking its
// own.
func Build(pkg string, o BuildOptions) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s\n%+v race=%v", root, o, Race))
	dir := filepath.Join(os.TempDir(), "mcp-gateway-testbin", fmt.Sprintf("%x", key[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	var flags []string
	if Race {
		flags = append(flags, "-race")
	}
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), pkg)...)
	if o.Script != "" {
		cmd = exec.Command("bash", append([]string{filepath.Join(root, o.Script), out}, flags...)...)
	}
	cmd.Dir = root
	// One build at a time: the next finds the binary up to date instead of
	// replacing it under a test that runs it (on Windows, go build copies
	// a binary into place rather than renaming it).
	unlock, err := lock(out + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// lock creates the file path holding this process's id, waiting while
// another live process holds it, and returns the function that removes it.
func lock(path string) (unlock func(), err error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = fmt.Fprint(f, os.Getpid())
			f.Close()
			return func() { os.Remove(path) }, err
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		// A holder that died left it: its process is gone, or it died
		// before writing its id (no id a minute on).
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(string(b))
			info, serr := os.Stat(path)
			if err == nil && !Alive(pid) || err != nil && serr == nil && time.Since(info.ModTime()) > time.Minute {
				os.Remove(path)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// moduleRoot is the directory of go.mod above the working directory (a
// test runs in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
