package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// KernelABI is the kernel's Landlock ABI version, 0 without Landlock.
func KernelABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// versions are go-landlock's configurations by ABI.
var versions = []landlock.Config{landlock.V1, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}

// Run is the whole job of the sandbox mode: it applies plan (the JSON
// Prepare made) to this process and executes the server in its place. It
// returns only on failure; the gateway shows the error as the server's.
func Run(plan string) error {
	var p Plan
	if err := json.Unmarshal([]byte(plan), &p); err != nil {
		return fmt.Errorf("sandbox: bad plan: %w", err)
	}
	// The server's cgroups first: nothing of it may run outside them, and
	// Landlock would not let it write there.
	if err := join(p.Cgroups); err != nil {
		return err
	}
	// no_new_privs and Landlock are set on this thread, which then
	// executes the server: it must stay the goroutine's.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if err := mountNS(p); err != nil {
		return err
	}
	if err := dropCaps(); err != nil {
		return err
	}
	if err := setLimits(p); err != nil {
		return err
	}
	if p.ABI > 0 && (p.FS || p.Net != "") {
		if err := restrict(p); err != nil {
			return err
		}
	}
	err := syscall.Exec(p.Path, p.Args, os.Environ())
	return fmt.Errorf("sandbox: exec %s: %w", p.Path, err)
}

// restrict applies p's Landlock rules at exactly p.ABI: the gateway
// decided they can be applied, so a failure is an error, not a downgrade.
func restrict(p Plan) error {
	if p.ABI >= len(versions) {
		p.ABI = len(versions) - 1
	}
	cfg := versions[p.ABI]
	var rules []landlock.Rule
	if p.FS {
		if err := unmoved(p); err != nil {
			return err
		}
		for _, path := range p.Read {
			if reachable(path) {
				rules = append(rules, pathRule(path, false, p.ABI))
			}
		}
		for _, path := range p.Write {
			if reachable(path) {
				rules = append(rules, pathRule(path, true, p.ABI))
			}
		}
		rules = append(rules, landlock.RWFiles(p.Devices...).IgnoreIfMissing())
	} else {
		cfg.HandledAccessFS, cfg.Scoped = 0, 0
	}
	switch p.Net {
	case "":
		cfg.HandledAccessNet = 0
	default:
		// TCP only: Landlock's UDP rules (ABI 10) are not asked for, so
		// the docs can say one thing of every kernel.
		cfg.HandledAccessNet = landlock.AccessNetSet(llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP)
		for _, port := range p.Ports {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	// The calling thread only (locked by Run, never unlocked): it is the
	// one that executes the server, and execve carries its domain over.
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	if fd < 0 {
		return nil // nothing to restrict
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	return nil
}

// mountNS gives this thread (and so the server it executes) a mount
// namespace of its own, where the session's sockets are hidden (p.Hide)
// and, with p.SealCgroups, every cgroup filesystem is read-only. It needs
// CAP_SYS_ADMIN in this process's user namespace: root has it, and so
// does a process the gateway started in a new user namespace (network
// none, or Applied.UserNS); dropCaps then takes it away, so the server
// cannot undo any of it. Where the OS refused that user namespace the
// gateway started this process without one and recorded that the
// sockets stay reachable: hiding them is then skipped, not an error.
func mountNS(p Plan) error {
	if !p.SealCgroups && len(p.Hide) == 0 {
		return nil
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		if errors.Is(err, unix.EPERM) && !p.SealCgroups {
			return nil
		}
		return fmt.Errorf("sandbox: mount namespace: %w", err)
	}
	// Nothing done here propagates back to the gateway's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox: mount namespace: %w", err)
	}
	for _, path := range p.Hide {
		if err := hidePath(path, slices.Concat(p.Read, p.Write, p.Devices)); err != nil {
			return err
		}
	}
	if p.SealCgroups {
		return sealCgroups()
	}
	return nil
}

// hidePath covers path in this thread's mount namespace: a directory by
// an empty read-only tmpfs on which the granted paths beneath it are
// bound back where they were, a file (a socket) by /dev/null.
func hidePath(path string, granted []string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // gone since the gateway looked: nothing to hide
	}
	if !fi.IsDir() {
		if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("sandbox: hide %s: %w", path, err)
		}
		return nil
	}
	// What stays must be opened before the tmpfs covers it.
	type keep struct {
		path string
		fd   int
		dir  bool
	}
	var keeps []keep
	defer func() {
		for _, k := range keeps {
			unix.Close(k.fd)
		}
	}()
	for _, g := range granted {
		if !beneath(g, path) || slices.ContainsFunc(granted, func(o string) bool { return o != g && beneath(g, o) && beneath(o, path) }) {
			continue // not beneath path, or bound back with a directory above it
		}
		fd, err := unix.Open(g, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // missing or unreachable: Run skips it too
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			continue
		}
		keeps = append(keeps, keep{g, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", path, "tmpfs", flags, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("sandbox: hide %s: %w", path, err)
	}
	for _, k := range keeps {
		// The way down to it, in the new tmpfs.
		if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
			return fmt.Errorf("sandbox: hide %s: keep %s: %w", path, k.path, err)
		}
		if k.dir {
			err = os.Mkdir(k.path, 0o755)
		} else {
			err = os.WriteFile(k.path, nil, 0o644)
		}
		if err != nil {
			return fmt.Errorf("sandbox: hide %s: keep %s: %w", path, k.path, err)
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("sandbox: hide %s: keep %s: %w", path, k.path, err)
		}
	}
	if err := unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("sandbox: hide %s: read-only: %w", path, err)
	}
	return nil
}

// sealCgroups makes every cgroup filesystem of this thread's mount
// namespace read-only, so that a server without Landlock's filesystem
// rules cannot write itself into another cgroup, nor raise its own
// limits. Prepare asks for it as root only.
func sealCgroups() error {
	// This thread's own view (/proc/self is the thread group leader's,
	// in the gateway's namespace).
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return fmt.Errorf("sandbox: mount namespace: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 0 || sep+1 >= len(f) || len(f) < 5 || f[sep+1] != "cgroup" && f[sep+1] != "cgroup2" {
			continue
		}
		dir := f[4]
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			return fmt.Errorf("sandbox: cgroup mount %s: %w", dir, err)
		}
		// A bind remount keeps what it is not given only if restated.
		keep := uintptr(st.Flags) & (unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC) // the same bits as MS_*
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|keep, ""); err != nil {
			return fmt.Errorf("sandbox: make cgroup mount %s read-only: %w", dir, err)
		}
	}
	return nil
}

// dropCaps leaves this thread, and so the server it executes, no
// capability: a gateway run as root would otherwise give a confined
// server all of root's (Landlock governs paths, TCP, ptrace and signals,
// not sethostname, mknod of a disk, raw sockets or a kernel module).
// Root keeps its capabilities across execve unless the bounding and
// inheritable sets are empty, so both are emptied as well as the
// effective, permitted and ambient ones. Without CAP_SETPCAP (not root)
// the bounding set cannot be changed and need not be: no_new_privs
// already stops execve from granting a file's capabilities.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sandbox: ambient capabilities: %w", err)
	}
	// PR_CAPBSET_READ fails with EINVAL past the kernel's last capability.
	for c := uintptr(0); ; c++ {
		if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0); err != nil {
			break
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("sandbox: bounding capability %d: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData // version 3: two 32-bit words
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("sandbox: capabilities: %w", err)
	}
	return nil
}

// unmoved checks that the paths Prepare resolved still lead where they
// did: Landlock opens a rule's path through its symbolic links, and a
// link made since (by what is left of the server's last run, in a
// directory it may write) would grant what the gateway never checked.
// The system's directories are the system's, and /proc/self is this
// process's own, resolved here on purpose.
func unmoved(p Plan) error {
	for _, path := range slices.Concat(p.Read, p.Write) {
		if slices.Contains(systemDirs, path) {
			continue
		}
		if r := evalSymlinks(path); r != "" && r != path {
			return fmt.Errorf("sandbox: %s now leads to %s through a symbolic link made since the gateway checked it; not started", path, r)
		}
	}
	return nil
}

// reachable reports whether this process can reach path at all: a path
// it cannot open (missing, or under a directory it may not search, such
// as another user's PATH entry) has nothing to grant, and would fail the
// whole ruleset.
func reachable(path string) bool {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// pathRule grants path: a directory and what is beneath it, or a file.
func pathRule(path string, write bool, abi int) landlock.Rule {
	fi, err := os.Stat(path)
	dir := err != nil || fi.IsDir()
	switch {
	case write && dir && abi >= 2:
		// Moving files within what it may write (npm does) needs refer.
		return landlock.RWDirs(path).WithRefer().IgnoreIfMissing()
	case write && dir:
		return landlock.RWDirs(path).IgnoreIfMissing()
	case write:
		return landlock.RWFiles(path).IgnoreIfMissing()
	case dir:
		return landlock.RODirs(path).IgnoreIfMissing()
	}
	return landlock.ROFiles(path).IgnoreIfMissing()
}
