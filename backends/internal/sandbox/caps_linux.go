package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hostCaps: Landlock confines the filesystem from ABI 1 and TCP from ABI
// 4, applied by the gateway re-executed in its sandbox mode.
func hostCaps(h Host) caps {
	why := func(need int) string {
		switch {
		case h.Helper == nil:
			return "the gateway cannot re-execute itself (no sandbox helper)"
		case h.ABI == 0:
			return "the kernel has no Landlock (Linux 5.13+ with landlock among the LSMs)"
		case h.ABI >= need:
			return ""
		}
		return fmt.Sprintf("the kernel's Landlock is ABI %d, TCP rules need ABI %d (Linux 6.7+)", h.ABI, need)
	}
	// Memory and processes: the server's cgroup (Cgroups.New), which the
	// sandbox mode joins before it executes the server.
	cg := h.Cgroup
	if cg == nil {
		cg = &Cgroup{}
	}
	limit := func(set bool, why string) string {
		switch {
		case h.Helper == nil:
			return "the gateway cannot re-execute itself (no sandbox helper)"
		case set:
			return ""
		case why == "":
			return "no cgroup was made for it"
		}
		return why
	}
	return caps{fs: why(1), netNone: why(4), netList: why(4), memory: limit(cg.Memory, cg.MemoryWhy), processes: limit(cg.Processes, cg.ProcessesWhy)}
}

// finish records what Landlock does not govern under p, and asks for a
// network namespace under network none.
func finish(p *Plan, a *Applied, h Host, env []string, proxyPort uint16) {
	if p.FS {
		var granted []string
		p.Hide, granted = hide(p, h, env)
		// Root makes the mount namespace itself, and under network none
		// the server's user namespace lets it; otherwise it needs one
		// (WithoutNamespace when the OS refuses).
		a.UserNS = os.Geteuid() != 0 && p.Net != "none"
		a.Gaps = append(a.Gaps, socketsHidden)
		for _, g := range granted {
			a.Gaps = append(a.Gaps, fmt.Sprintf("UNIX sockets in %s (a read or write path: not hidden)", g))
		}
		if p.ABI < 6 {
			a.Gaps = append(a.Gaps, fmt.Sprintf("signals to, and abstract UNIX sockets of, the gateway and your other processes (Landlock scopes them from ABI 6, Linux 6.12; this kernel's is %d)", p.ABI))
		}
	}
	if !p.FS && len(p.Cgroups) > 0 {
		// Landlock would keep the cgroup files read-only; without it a
		// server that may write them could move itself out of its
		// limits. Root may make them read-only in a mount namespace
		// of the server's own; another user cannot.
		if os.Geteuid() == 0 {
			p.SealCgroups = true
		} else {
			a.Gaps = append(a.Gaps, "leaving its cgroup: without filesystem confinement the server may write itself into another cgroup of yours, out of memory_mb and processes")
		}
	}
	if p.Net == "none" {
		// Where the OS allows it, a network namespace closes UDP too
		// (WithoutNetNS when it does not).
		a.NetNS = true
	} else if p.Net != "" {
		a.Gaps = append(a.Gaps, udpGap,
			fmt.Sprintf("TCP to port %d of other addresses (Landlock rules are per port: the proxy's port is allowed on every address)", proxyPort))
	}
}

// hide is what the server's mount namespace covers (Plan.Hide): the
// places where the session's UNIX sockets live — in /tmp (tmpSockets:
// X11, ssh-agent, tmux, D-Bus), /run (/run/user/UID with
// the session D-Bus, Wayland, gpg-agent, systemd's user bus; the system
// bus, Docker, Podman, databases), XDG_RUNTIME_DIR, ~/.gnupg — and the
// sockets the server's environment names (socketVars: an SSH_AUTH_SOCK
// in the home). What the server is granted stays: a read or write path
// beneath a hidden directory is bound back (the state directory in
// /tmp, /run/systemd/resolve for DNS), and a candidate that is granted,
// or lies in what is, is not hidden and returned in granted, for status.
func hide(p *Plan, h Host, env []string) (hidden, granted []string) {
	grants := slices.Concat(p.Read, p.Write)
	cands := append(tmpSockets("/tmp"), "/run", lookup(env, "XDG_RUNTIME_DIR"))
	if h.Home != "" {
		cands = append(cands, filepath.Join(h.Home, ".gnupg"))
	}
	for _, name := range socketVars {
		if v := lookup(env, name); v != "" {
			paths, _ := socketPaths(name, v, env)
			cands = append(cands, paths...)
		}
	}
	for _, c := range cands {
		if !filepath.IsAbs(c) {
			continue
		}
		if _, err := os.Lstat(c); err != nil {
			continue
		}
		r := realPath(c)
		switch {
		case grantedPath(r, grants):
			if !slices.Contains(granted, r) {
				granted = append(granted, r)
			}
		case !grantedPath(r, hidden):
			hidden = append(hidden, r)
		}
	}
	return hidden, granted
}

// tmpSockets are the session's sockets in tmp (/tmp) as the gateway
// finds them: its socket files, and the directories the X11 server,
// ssh-agent, tmux, screen and D-Bus make for theirs. Not the whole of
// /tmp: a read or write path may lie there through a symbolic link, and
// the server is denied the rest by Landlock anyway (connect aside).
func tmpSockets(tmp string) []string {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.Type()&os.ModeSocket != 0,
			e.IsDir() && (slices.Contains([]string{".X11-unix", ".ICE-unix", ".XIM-unix", ".font-unix", "screens", ".dbus"}, name) ||
				strings.HasPrefix(name, "ssh-") || strings.HasPrefix(name, "tmux-") || strings.HasPrefix(name, "dbus-")):
			out = append(out, filepath.Join(tmp, name))
		}
	}
	return out
}

// systemDirs may be read (and executed) by every confined server: the
// system's programs, libraries, certificates and settings.
var systemDirs = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/nix/store",
	"/run/systemd/resolve", // /etc/resolv.conf's target under systemd-resolved
	"/sys/devices/system/cpu", "/sys/fs/cgroup",
	"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/filesystems",
}

// devices may be read and written.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
