package backends

import (
	"errors"
	"io/fs"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/egress"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
	"github.com/mcp-gateway/mcp-gateway/backends/internal/sandbox"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// startProcess starts s.Command with the allowed part of environ
// (childEnviron) plus s.Env, in s.Cwd, as a process group of its own (a Job
// Object on Windows): see proc.Start and docs/platforms.md for what ends it
// and its children.
//
// A server whose sandbox is on is started confined (sandbox.Prepare): its
// confinement is returned (nil when off). The caller owns it once the
// process runs, and releases it once the process is gone.
func (m *Manager) startProcess(s config.Server, environ []string) (*proc.Process, *confinement, error) {
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
	if !s.Sandbox.On() {
		p, err := proc.Start(proc.Spec{Command: s.Command, Args: s.Args, Env: env, Dir: s.Cwd})
		return p, nil, err
	}
	abi := sandbox.KernelABI
	if m.opts.LandlockABI != nil {
		abi = m.opts.LandlockABI
	}
	var home string // the gateway's, which no sandbox grants whole
	for _, kv := range m.environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	host := sandbox.Host{Helper: m.opts.Sandbox, ABI: abi(), Home: home, Protected: m.opts.Protected, NoCgroupJoin: m.opts.NoCgroupJoin}
	if m.opts.SandboxDir != "" {
		host.StateDir = filepath.Join(m.opts.SandboxDir, s.Name)
	}
	c := &confinement{}
	if s.Sandbox.Network.Policy == "list" {
		// A proxy that cannot listen leaves host.Proxy empty: Prepare
		// then says the list is not enforced (refused under enforce).
		if q, err := egress.Start(s.Sandbox.Network.Allow); err == nil {
			c.proxy, host.Proxy = q, q.Addr()
		}
	}
	if s.Sandbox.MemoryMB > 0 || s.Sandbox.Processes > 0 {
		c.cgroup = m.cgroups().New(s.Name, s.Sandbox.MemoryMB, s.Sandbox.Processes)
		host.Cgroup = c.cgroup
	}
	p, applied, err := m.startConfined(s, env, host)
	c.applied = applied
	if c.proxy != nil && (err != nil || applied.Proxy == "") {
		c.proxy.Close()
		c.proxy = nil
	}
	if err != nil || !applied.MemoryEnforced && !applied.ProcessesEnforced {
		m.releaseCgroup(c)
	}
	return p, c, err
}

// confinement is a confined server's confinement as applied, with what
// its run owns beside the process: its egress proxy and its cgroup.
type confinement struct {
	applied *Sandbox
	proxy   *egress.Proxy   // nil: none
	cgroup  *sandbox.Cgroup // nil: none
}

// release ends what c owns, once the server's process is gone (reaped):
// the proxy, after the server (nothing of it is left to connect), and
// the cgroup, killing first whatever the server left in it.
func (m *Manager) release(c *confinement) {
	if c == nil {
		return
	}
	if c.proxy != nil {
		c.proxy.Close()
		c.proxy = nil
	}
	m.releaseCgroup(c)
}

func (m *Manager) releaseCgroup(c *confinement) {
	if c.cgroup == nil {
		return
	}
	if err := c.cgroup.Remove(); err != nil {
		m.log.Warn("backend's cgroup is left behind", "err", err)
	}
	c.cgroup = nil
}

// exceeded reports the crash reason of a server, its process p exited,
// that the OS ended at its memory limit (Linux: its cgroup's OOM kill;
// Windows: its Job Object's limit), or "".
func (c *confinement) exceeded(p *proc.Process) string {
	if c == nil || c.applied == nil || !c.applied.MemoryEnforced || !c.cgroup.OOMKilled(p.Killed()) && !p.MemoryLimitHit() {
		return ""
	}
	return sandbox.MemoryExceeded(c.applied.MemoryMB)
}

// startConfined is startProcess's confined start, with host decided.
func (m *Manager) startConfined(s config.Server, env []string, host sandbox.Host) (*proc.Process, *Sandbox, error) {
	argv, env, applied, err := sandbox.Prepare(s.Sandbox, sandbox.Spec{Command: s.Command, Args: s.Args, Env: env, Dir: s.Cwd}, host)
	if err != nil {
		return nil, &applied, err
	}
	spec := proc.Spec{Command: argv[0], Args: argv[1:], Env: env, Dir: s.Cwd, NetNS: applied.NetNS, UserNS: applied.UserNS}
	if applied.MemoryEnforced { // by the process's own group where the OS has limits there (Windows' Job Object)
		spec.MemoryMB = applied.MemoryMB
	}
	if applied.ProcessesEnforced {
		spec.Processes = applied.Processes
	}
	p, err := proc.Start(spec)
	if err != nil && (spec.NetNS || spec.UserNS) {
		// Unprivileged user namespaces are off here (a sysctl, or
		// Ubuntu's AppArmor): Landlock's TCP rules alone, and the
		// session's sockets not hidden, as status says.
		if spec.NetNS {
			applied.WithoutNetNS(err)
		} else {
			applied.WithoutUserNS(err)
		}
		spec.NetNS, spec.UserNS = false, false
		p, err = proc.Start(spec)
	}
	return p, &applied, err
}

// Sandbox is a server's confinement as applied (docs/sandbox.md).
type Sandbox = sandbox.Applied

// SandboxArg is the hidden argument of the gateway binary's sandbox mode
// (Options.Sandbox): `mcp-gateway __sandbox PLAN`.
const SandboxArg = sandbox.Arg

// RunSandbox is the whole job of the sandbox mode: it confines this
// process as plan says and executes the server in its place; it returns
// only on failure.
func RunSandbox(plan string) error { return sandbox.Run(plan) }

// LandlockABI is the kernel's Landlock ABI version (0: none, or not
// Linux): what the sandbox can confine with.
func LandlockABI() int { return sandbox.KernelABI() }

// CgroupLimitsMissing says why this machine cannot give a confined
// server memory and process limits ("" when it can): it makes a cgroup
// for both, as a server's start would, and removes it.
func CgroupLimitsMissing() string {
	g := sandbox.FindCgroups().New("probe", 1, 1)
	defer g.Remove()
	return strings.TrimSpace(g.MemoryWhy + " " + g.ProcessesWhy)
}

// refused reports whether a start failed because the sandbox refused it
// (enforce cannot confine it, or a path would expose the gateway's own
// files): trying again changes nothing until the user does.
func refused(err error) bool { return sandbox.Unstartable(err) }

// unrunnable reports whether a start failed because the command cannot be
// run at all — not found, not executable, not a program — which trying
// again does not change.
func unrunnable(err error) bool {
	var errno syscall.Errno
	return refused(err) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrPermission) ||
		errors.As(err, &errno) && (errno == syscall.ENOEXEC || runtime.GOOS == "windows" && errno == 193) // ERROR_BAD_EXE_FORMAT
}
