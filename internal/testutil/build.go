package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// BuildOptions say how Build builds a binary.
type BuildOptions struct {
	// Race builds with -race: true when the tests run with -race, so that
	// end-to-end runs catch data races in the binaries too.
	Race bool
	// Script, if set, builds with this script of the module (relative to
	// its root) called as `SCRIPT OUTPUT [go build flags]`, the way
	// releases are built; else `go build -o OUTPUT PKG`.
	Script string
}

// Build returns the path of the binary of pkg (a path relative to the
// module root, "./backends/testbackend"), building it if needed. Binaries
// are kept in the temporary directory under a key made of the module's
// sources (names, sizes and times), the Go version and the options, so that
// every test binary of one `go test ./...` run — and later runs over the
// same sources — share one build instead of linking their own.
func Build(pkg string, o BuildOptions) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(root, pkg, o)
	if err != nil {
		return "", err
	}
	cache := filepath.Join(os.TempDir(), "mcp-gateway-testbin")
	tree := fmt.Sprintf("%x", sha256.Sum256([]byte(root)))[:8]
	dir := filepath.Join(cache, tree+"-"+key)
	name := filepath.Base(pkg)
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	out := filepath.Join(dir, name)
	if _, err := os.Stat(out); err == nil {
		now := time.Now()
		os.Chtimes(dir, now, now) // in use: not stale
		return out, nil
	}
	removeStale(cache, tree+"-")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Built under a name of its own and renamed into place, so that test
	// binaries building at the same time never see half a file.
	tmp := filepath.Join(dir, fmt.Sprintf("%d-%s", os.Getpid(), name))
	var cmd *exec.Cmd
	var flags []string
	if o.Race {
		flags = append(flags, "-race")
	}
	if o.Script != "" {
		cmd = exec.Command("bash", append([]string{filepath.Join(root, o.Script), tmp}, flags...)...)
	} else {
		cmd = exec.Command("go", append(append([]string{"build", "-o", tmp}, flags...), pkg)...)
	}
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		// Another test binary won (Windows refuses to replace a file in use).
		os.Remove(tmp)
		if _, statErr := os.Stat(out); statErr != nil {
			return "", err
		}
	}
	return out, nil
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

// sourceKey hashes what a build depends on: the module's Go files (not
// the tests),
// go.mod, go.sum and scripts, by name, size and modification time.
func sourceKey(root, pkg string, o BuildOptions) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s/%s\n%s\n%+v\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, pkg, o)
	fmt.Fprintf(h, "VERSION=%s\n", os.Getenv("VERSION"))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "node_modules" || n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, "_test.go") {
			return nil
		}
		if !strings.HasSuffix(p, ".go") && !strings.HasPrefix(d.Name(), "go.") && filepath.Base(filepath.Dir(p)) != "scripts" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// removeStale removes builds not used for a day, and this tree's builds of
// earlier sources not used for 15 minutes (longer than a test run that may
// still be using one), so that a day of edits does not fill the disk.
func removeStale(cache, tree string) {
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue
		}
		age := time.Since(info.ModTime())
		if age > 24*time.Hour || strings.HasPrefix(e.Name(), tree) && age > 15*time.Minute {
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}
