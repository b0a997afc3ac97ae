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
	"strings"
	"time"
)

// Build returns the path of the binary of pkg (relative to the module root,
// "./backends/testbackend"), built or brought up to date by `go build -o
// OUTPUT PKG` or, if script is not "", by that script of the module called
// as `SCRIPT OUTPUT [go build flags]`, the way releases are built; with
// -race when the tests run with it (Race), so that end-to-end runs catch
// data races in the binaries too. The binary is kept in the temporary
// directory, one per module tree and script, and go build decides whether
// it is up to date (by the build ID recorded in it), so that the test
// binaries of one `go test ./...` run, and later runs over the same
// sources, share one link instead of each linking its own.
//
// Where no Go toolchain runs (the Windows tests under Wine, .ci/wine-test),
// $MCP_GATEWAY_TEST_BINDIR names a directory of the binaries built
// beforehand for the tests' OS, and Build returns pkg's from there.
func Build(pkg, script string) (string, error) {
	if dir := os.Getenv("MCP_GATEWAY_TEST_BINDIR"); dir != "" {
		out := filepath.Join(dir, exe(filepath.Base(pkg)))
		if _, err := os.Stat(out); err != nil {
			return "", fmt.Errorf("build %s: not built beforehand in $MCP_GATEWAY_TEST_BINDIR: %w", pkg, err)
		}
		return out, nil
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	key := sha256.Sum256(fmt.Appendf(nil, "%s\n%s race=%v", root, script, Race))
	dir := filepath.Join(os.TempDir(), "mcp-gateway-testbin", fmt.Sprintf("%x", key[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, exe(filepath.Base(pkg)))
	var flags []string
	if Race {
		flags = append(flags, "-race")
	}
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), pkg)...)
	if script != "" {
		cmd = exec.Command("bash", append([]string{filepath.Join(root, script), out}, flags...)...)
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

// exe is the file name of the executable named name on this OS.
func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// MustBuild is Build for TestMain: it exits the process if the build fails.
func MustBuild(pkg, script string) string {
	bin, err := Build(pkg, script)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return bin
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
