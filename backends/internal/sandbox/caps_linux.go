package sandbox

import (
	"fmt"
	"os"
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
func finish(p *Plan, a *Applied, _ Host, proxyPort uint16) {
	if p.FS {
		a.Gaps = append(a.Gaps, "UNIX sockets by path (connect is not governed by Landlock before ABI 9)")
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
