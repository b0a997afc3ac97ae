package backends

import (
	"runtime"
	"sort"

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
