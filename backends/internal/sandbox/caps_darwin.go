package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// sandboxExec is the program that runs a command under a sandbox profile
// (Seatbelt); it ships with every macOS.
const sandboxExec = "/usr/bin/sandbox-exec"

// hostCaps: a sandbox-exec profile confines files and the network, run
// by the gateway re-executed in its sandbox mode. macOS has no per-server
// memory or process limit.
func hostCaps(h Host) caps {
	var why string
	switch _, err := os.Stat(sandboxExec); {
	case h.Helper == nil:
		why = "the gateway cannot re-execute itself (no sandbox helper)"
	case err != nil:
		why = sandboxExec + " is missing"
	}
	return caps{
		fs: why, netNone: why, netList: why,
		memory:    "not enforced on macOS: it has no limit for a process tree (RLIMIT_AS and RLIMIT_DATA are per process, and V8 reserves gigabytes of address space)",
		processes: "not enforced on macOS: RLIMIT_NPROC counts every process of the user, not the server's",
	}
}

// finish denies the gateway's own files over every allow in the profile
// (the directory of the state directories stays open to this server's
// own), and records what the profile does not govern.
func finish(p *Plan, a *Applied, h Host, _ []string, _ uint16) {
	if !p.FS {
		return
	}
	for _, g := range h.Protected {
		if g == "" {
			continue
		}
		g = filepath.Clean(g)
		if h.StateDir != "" && (g == h.StateDir || strings.HasPrefix(h.StateDir, g+string(filepath.Separator))) {
			continue // this server's own state directory lies in it
		}
		p.Deny = append(p.Deny, g)
	}
	a.Gaps = append(a.Gaps, "file metadata (stat) of any path: a server can learn that a file exists, not read it")
}

// systemDirs may be read (and executed) by every confined server: the
// system's programs, libraries, frameworks, certificates and settings,
// Homebrew (/opt/homebrew, /usr/local) and the developer tools that
// /usr/bin's python3 and git run.
var systemDirs = []string{
	"/usr", "/bin", "/sbin", "/System", "/Library", "/opt", "/nix/store",
	"/private/etc", "/private/var/db/timezone", "/private/var/db/dyld", "/private/var/select",
	"/private/var/db/xcode_select_link", "/private/var/run/resolv.conf",
	"/Applications/Xcode.app/Contents/Developer", "/dev/fd",
}

// devices may be read and written.
var devices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper"}
