package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Run is the whole job of the sandbox mode on macOS: it sets core dumps
// off and the open-files limit on this process, writes plan's profile
// (Profile, over its paths resolved) and executes the server under
// sandbox-exec with it, which the server and all it starts inherit. It
// returns only on failure; the gateway shows the error as the server's.
func Run(plan string) error {
	var p Plan
	if err := json.Unmarshal([]byte(plan), &p); err != nil {
		return fmt.Errorf("sandbox: bad plan: %w", err)
	}
	if err := setLimits(p); err != nil {
		return err
	}
	p.Read, p.Write, p.Devices, p.Deny = realPaths(p.Read), realPaths(p.Write), realPaths(p.Devices), realPaths(p.Deny)
	profile, err := Profile(p)
	if err != nil {
		return err
	}
	args := []string{sandboxExec, "-p", profile, p.Path}
	err = syscall.Exec(sandboxExec, append(args, p.Args[1:]...), os.Environ())
	return fmt.Errorf("sandbox: exec %s: %w", sandboxExec, err)
}

// realPaths are the paths as macOS matches them against a profile: with
// symbolic links resolved (/tmp/x is /private/tmp/x, /etc is
// /private/etc). A path that does not exist is skipped, as on Linux: it
// has nothing to grant, and a rule for its unresolved name would not match
// what the server later creates through a link.
func realPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			if r, err = filepath.Abs(r); err == nil {
				out = append(out, r)
			}
		}
	}
	return out
}
