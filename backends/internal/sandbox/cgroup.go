package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Memory and process limits are a cgroup per server (Linux), made
// beneath the gateway's own cgroup of each hierarchy: cgroup v1's memory
// and pids hierarchies where they are mounted (memory.limit_in_bytes and
// memory.memsw.limit_in_bytes, pids.max), else cgroup v2's unified one
// (memory.max, memory.swap.max, pids.max). The sandbox mode joins it
// (Plan.Cgroups) before it executes the server, so that nothing of the
// server ever runs outside it; the supervisor removes it once the server
// is gone.

// hierarchy is where one controller is: its hierarchy's version and the
// directory of the gateway's own cgroup in it ("" with why: none).
type hierarchy struct {
	v2  bool
	dir string
	why string
}

// findHierarchies locates the gateway's own memory and pids cgroups from
// the text of /proc/self/cgroup and /proc/self/mountinfo. A controller
// bound to a cgroup v1 hierarchy is there (a hybrid system's unified
// hierarchy has none of them); otherwise it is the unified hierarchy's,
// whose controllers are checked later (on the files themselves).
func findHierarchies(selfCgroup, mountinfo string) (memory, pids hierarchy) {
	type mount struct{ root, point string }
	v1 := map[string][]mount{} // by controller
	var v2 []mount
	for _, line := range strings.Split(mountinfo, "\n") {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		m := mount{root: unescapeMount(f[3]), point: unescapeMount(f[4])}
		switch g[0] {
		case "cgroup2":
			v2 = append(v2, m)
		case "cgroup":
			for _, o := range strings.Split(g[2], ",") {
				v1[o] = append(v1[o], m)
			}
		}
	}
	// HIERARCHY-ID:CONTROLLERS:PATH, PATH relative to the hierarchy's root
	// (or to the cgroup namespace's).
	own := map[string]string{} // controller ("" for v2) → path
	for _, line := range strings.Split(selfCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	locate := func(ms []mount, p string) string {
		for _, m := range ms {
			if rel, ok := within(p, m.root); ok {
				return filepath.Join(m.point, rel)
			}
		}
		return ""
	}
	find := func(c string) hierarchy {
		if ms := v1[c]; len(ms) > 0 {
			p, ok := own[c]
			if !ok {
				return hierarchy{why: fmt.Sprintf("cgroup v1 %s is mounted, but /proc/self/cgroup has no %s line", c, c)}
			}
			if d := locate(ms, p); d != "" {
				return hierarchy{dir: d}
			}
			return hierarchy{why: fmt.Sprintf("the gateway's cgroup v1 %s cgroup %s is not under a mount of the hierarchy", c, p)}
		}
		p, ok := own[""]
		switch {
		case len(v2) == 0:
			return hierarchy{why: fmt.Sprintf("no cgroup %s controller is mounted (neither a cgroup v1 %s hierarchy nor cgroup v2)", c, c)}
		case !ok:
			return hierarchy{why: "cgroup v2 is mounted, but /proc/self/cgroup has no 0:: line"}
		}
		if d := locate(v2, p); d != "" {
			return hierarchy{v2: true, dir: d}
		}
		return hierarchy{v2: true, why: fmt.Sprintf("the gateway's cgroup v2 cgroup %s is not under a mount of the hierarchy", p)}
	}
	return find("memory"), find("pids")
}

// within is p relative to root, if p is root or beneath it.
func within(p, root string) (string, bool) {
	p, root = path.Clean(p), path.Clean(root)
	if root == "/" {
		return p, true
	}
	if p == root {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(p, root+"/"); ok {
		return "/" + rest, true
	}
	return "", false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupPrefix starts the name of every server cgroup a gateway makes:
// "mcp-gateway.PID.START." with its process's start time (clock ticks
// after boot), so that two gateways, and a gateway whose PID was once
// another's, never make the same name.
func cgroupPrefix(pid int, start uint64) string {
	return fmt.Sprintf("mcp-gateway.%d.%d.", pid, start)
}

// staleOwner is the PID and start time in the name of a server cgroup
// ("mcp-gateway.PID.START.SERVER.N"), if it is one.
func staleOwner(name string) (pid int, start uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp-gateway.")
	if !ok {
		return 0, 0, false
	}
	f := strings.SplitN(rest, ".", 3)
	if len(f) != 3 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil
}

// cgroupName is the server's part of a cgroup name: its name with what a
// directory name should not hold replaced, bounded.
func cgroupName(server string) string {
	b := []byte(server)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// startTime is field 22 of /proc/PID/stat (its text): the process's start
// time in clock ticks after boot.
func startTime(stat string) (uint64, bool) {
	// The command name (field 2) may hold spaces and parentheses.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 { // fields 3..22
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	return v, err == nil
}

// MemoryExceeded is the crash reason of a server the kernel killed at
// its memory limit of mb MB.
func MemoryExceeded(mb int) string {
	return fmt.Sprintf("%s (%d MB)", memoryExceeded, mb)
}

// memoryExceeded starts MemoryExceeded's reasons.
const memoryExceeded = "exceeded its memory limit"

// IsMemoryExceeded reports whether a crash reason is MemoryExceeded's.
func IsMemoryExceeded(reason string) bool { return strings.HasPrefix(reason, memoryExceeded+" (") }

// Cgroups makes the servers' cgroups of one gateway (FindCgroups); its
// owner is the gateway's supervisor.
type Cgroups struct {
	// memory and pids are where servers' cgroups are made: the gateway's
	// own cgroup (v1, or v2 where it may give controllers to children),
	// or, on v2, the parent of the gateway's (a cgroup with processes in
	// it may not give controllers to children: no-internal-processes).
	memory, pids hierarchy
	prefix       string // of every name (cgroupPrefix)

	mu  sync.Mutex
	seq int // numbers the cgroups made, so that restarts never collide
}

// Cgroup is one server's cgroup (or one per v1 hierarchy) as made by
// Cgroups.New: what it enforces, and why not what it does not.
type Cgroup struct {
	Memory, Processes       bool   // memory_mb, processes are set
	MemoryWhy, ProcessesWhy string // asked for and not set: what the OS lacks

	dirs []string // the directories made, each joined by the server
	mem  string   // the memory cgroup's directory ("": none)
	v2   bool     // mem is cgroup v2's
}

// Join is the cgroup.procs files the server's sandbox writes itself
// into before it executes the server.
func (g *Cgroup) Join() []string {
	if g == nil {
		return nil
	}
	out := make([]string, len(g.dirs))
	for i, d := range g.dirs {
		out[i] = filepath.Join(d, "cgroup.procs")
	}
	return out
}

// New makes server's cgroup for a limit of memMB MB of memory and procs
// processes (0: not asked), and reports what it set and, for what it did
// not, why.
func (c *Cgroups) New(server string, memMB, procs int) *Cgroup {
	g := &Cgroup{}
	if memMB <= 0 && procs <= 0 {
		return g
	}
	next := func() string {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.seq++
		return c.prefix + cgroupName(server) + "." + strconv.Itoa(c.seq)
	}
	name := next() // the same in every hierarchy, unless taken there
	mkdir := func(parent string) (string, error) {
		for _, d := range g.dirs {
			if filepath.Dir(d) == parent {
				return d, nil // v2: one cgroup for both limits
			}
		}
		for range 100 {
			d := filepath.Join(parent, name)
			err := os.Mkdir(d, 0o755)
			if errors.Is(err, os.ErrExist) {
				name = next() // another Cgroups of this gateway's (a second Manager) took it
				continue
			}
			if err != nil {
				return "", err
			}
			g.dirs = append(g.dirs, d)
			return d, nil
		}
		return "", fmt.Errorf("no free name for a cgroup of %s in %s", server, parent)
	}
	if memMB > 0 {
		if c.memory.dir == "" {
			g.MemoryWhy = c.memory.why
		} else if d, err := mkdir(c.memory.dir); err != nil {
			g.MemoryWhy = fmt.Sprintf("cannot make its cgroup: %v", err)
		} else if err := setMemory(d, c.memory.v2, memMB); err != nil {
			g.MemoryWhy = err.Error()
		} else {
			g.Memory, g.mem, g.v2 = true, d, c.memory.v2
		}
	}
	if procs > 0 {
		if c.pids.dir == "" {
			g.ProcessesWhy = c.pids.why
		} else if d, err := mkdir(c.pids.dir); err != nil {
			g.ProcessesWhy = fmt.Sprintf("cannot make its cgroup: %v", err)
		} else if err := write(d, "pids.max", strconv.Itoa(procs)); err != nil {
			g.ProcessesWhy = err.Error()
		} else {
			g.Processes = true
		}
	}
	return g
}

// setMemory limits the cgroup at d to mb MB, swap included.
func setMemory(d string, v2 bool, mb int) error {
	n := strconv.FormatInt(int64(mb)<<20, 10)
	if v2 {
		if err := write(d, "memory.max", n); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(d, "memory.swap.max")); err == nil {
			return write(d, "memory.swap.max", "0")
		}
		return nil
	}
	if err := write(d, "memory.limit_in_bytes", n); err != nil {
		return err
	}
	// Without swap accounting (no memsw files) there is no swap limit to
	// set: the kernel was built or booted without it.
	if _, err := os.Stat(filepath.Join(d, "memory.memsw.limit_in_bytes")); err == nil {
		return write(d, "memory.memsw.limit_in_bytes", n)
	}
	return nil
}

func write(dir, file, v string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil {
		return fmt.Errorf("cgroup %s: %w", file, err)
	}
	return nil
}

// OOMKilled reports whether the kernel killed a process of the server at
// its memory limit: the cgroup's oom_kill count (v1 memory.oom_control,
// v2 memory.events), which the kernel raises before it sends the
// SIGKILL, so it is there once the server is reaped. Kernels before 4.13
// have no such count: there, killed (the server itself died of SIGKILL)
// after the cgroup hit its limit (memory.failcnt) stands for it.
func (g *Cgroup) OOMKilled(killed bool) bool {
	if g == nil || g.mem == "" {
		return false
	}
	f := "memory.oom_control"
	if g.v2 {
		f = "memory.events"
	}
	if n, ok := keyed(filepath.Join(g.mem, f))["oom_kill"]; ok {
		return n > 0
	}
	b, err := os.ReadFile(filepath.Join(g.mem, "memory.failcnt"))
	n, _ := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	return killed && err == nil && n > 0
}

// keyed reads a cgroup file of "key value" lines.
func keyed(p string) map[string]uint64 {
	m := map[string]uint64{}
	f, err := os.Open(p)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}

// Remove kills whatever is left in the cgroup (after the server was
// reaped: what it started and left behind) and removes the cgroup.
func (g *Cgroup) Remove() error {
	if g == nil {
		return nil
	}
	var errs []error
	for _, d := range slices.Backward(g.dirs) {
		if err := removeCgroup(d); err != nil {
			errs = append(errs, err)
		}
	}
	g.dirs = nil
	return errors.Join(errs...)
}

// removeCgroup SIGKILLs the processes in the cgroup at d until there are
// none, and removes it. A killed process leaves the cgroup as it exits,
// and the kernel lets the cgroup go a moment after; both are waited for,
// boundedly.
func removeCgroup(d string) error {
	deadline := time.Now().Add(5 * time.Second)
	for step := time.Millisecond; ; step = min(2*step, 50*time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				kill(pid)
			}
		}
		err = os.Remove(d)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", d, err)
		}
		time.Sleep(step)
	}
}
