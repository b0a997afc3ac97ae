package backends

import (
	"errors"
	"io/fs"
	"os/exec"
	"runtime"
	"sort"
	"syscall"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// startProcess starts s.Command with the allowed part of environ
// (childEnviron) plus s.Env, in s.Cwd, as a process group of its own (a Job
// Object on Windows): see proc.Start and docs/platforms.md for what ends it
// and its children.
func startProcess(s config.Server, environ []string) (*proc.Process, error) {
	environ = childEnviron(environ, s.InheritEnv, runtime.GOOS)
	env := make([]string, 0, len(environ)+len(s.Env))
	env = append(env, environ...)
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k]) // exec dedups: the last value wins
	}
	return proc.Start(proc.Spec{Command: s.Command, Args: s.Args, Env: env, Dir: s.Cwd})
}

// unrunnable reports whether a start failed because the command cannot be
// run at all — not found, not executable, not a program — which trying
// again does not change.
func unrunnable(err error) bool {
	var errno syscall.Errno
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrPermission) ||
		errors.As(err, &errno) && (errno == syscall.ENOEXEC || runtime.GOOS == "windows" && errno == 193) // ERROR_BAD_EXE_FORMAT
}
