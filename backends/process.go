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
// confinement as applied is returned. A network list is enforced through
// an egress proxy of its own, started here before the child: the caller
// owns it (non-nil only with the process) and closes it once the process
// is gone.
func (m *Manager) startProcess(s config.Server, environ []string) (*proc.Process, *Sandbox, *egress.Proxy, error) {
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
		return p, nil, nil, err
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
	host := sandbox.Host{Helper: m.opts.Sandbox, ABI: abi(), Home: home, Protected: m.opts.Protected, CgroupV2: sandbox.CgroupV2()}
	if m.opts.SandboxDir != "" {
		host.StateDir = filepath.Join(m.opts.SandboxDir, s.Name)
	}
	var px *egress.Proxy
	if s.Sandbox.Network.Policy == "list" {
		// A proxy that cannot listen leaves host.Proxy empty: Prepare
		// then says the list is not enforced (refused under enforce).
		if q, err := egress.Start(s.Sandbox.Network.Allow); err == nil {
			px, host.Proxy = q, q.Addr()
		}
	}
	p, applied, err := m.startConfined(s, env, host)
	if px != nil && (err != nil || applied.Proxy == "") {
		px.Close()
		px = nil
	}
	return p, applied, px, err
}

// startConfined is startProcess's confined start, with host decided.
func (m *Manager) startConfined(s config.Server, env []string, host sandbox.Host) (*proc.Process, *Sandbox, error) {
	argv, env, applied, err := sandbox.Prepare(s.Sandbox, sandbox.Spec{Command: s.Command, Args: s.Args, Env: env, Dir: s.Cwd}, host)
	if err != nil {
		return nil, &applied, err
	}
	spec := proc.Spec{Command: argv[0], Args: argv[1:], Env: env, Dir: s.Cwd, NetNS: applied.NetNS}
	if applied.MemoryEnforced { // by the process's own group where the OS has limits there (Windows' Job Object)
		spec.MemoryMB = applied.MemoryMB
	}
	if applied.ProcessesEnforced {
		spec.Processes = applied.Processes
	}
	p, err := proc.Start(spec)
	if err != nil && spec.NetNS {
		// Unprivileged user namespaces are off here (a sysctl, or
		// Ubuntu's AppArmor): Landlock's TCP rules alone, as status says.
		applied.WithoutNetNS(err)
		spec.NetNS = false
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
