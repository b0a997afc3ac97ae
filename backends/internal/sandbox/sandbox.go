// Package sandbox confines a backend server (docs/sandbox.md). The
// supervisor decides, in the gateway, what can be applied on this OS
// (Prepare); the gateway binary re-executed in its hidden sandbox mode
// applies exactly that to itself and then executes the server (Run), so
// that every process of the server inherits it and no helper binary is
// needed.
//
// Prepare is the same on every OS; what the OS can apply is decided in
// caps_GOOS.go (hostCaps), and applied by run_GOOS.go.
//
// On Linux: no_new_privs, core dumps off, an open-files limit, Landlock
// filesystem rules (read: the system, the server's runtime and its read
// paths; write: its state directory and its write paths) and Landlock TCP
// rules for network none, or for a list the one port of the server's
// egress proxy (package egress). Memory and processes are limits of a
// cgroup per server (cgroup.go: v1's memory and pids hierarchies, else
// v2's where the gateway may give children the controllers), made by
// the supervisor beneath the gateway's own cgroup and joined by the
// sandbox mode before anything else; where none can be made they are
// reported as not enforced. The session's UNIX sockets (D-Bus, ssh-agent,
// X11, Docker), whose connect Landlock does not govern before ABI 9, leave
// the server's environment (sockets.go) and are hidden in a mount
// namespace of its own (Plan.Hide), made as root or in a user namespace.
//
// On macOS: core dumps off, an open-files limit, and a generated
// sandbox-exec profile (Profile) with the same files and network.
//
// On Windows: the server's Job Object bounds memory and processes
// (package proc); files and the network are not confined.
package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// Arg is the hidden argument that turns the gateway binary into the
// sandbox of one server: `mcp-gateway __sandbox PLAN` (PLAN is JSON).
const Arg = "__sandbox"

// maxABI is the newest Landlock ABI the rules are written for (and
// tested with); a newer kernel is used at this level.
const maxABI = 7

// Plan is what the sandbox mode applies to itself before it executes the
// server. It holds paths and limits, never a secret (it is an argument).
type Plan struct {
	Path string   `json:"path"` // the server's program, absolute
	Args []string `json:"args"` // its argv, argv[0] first
	// ABI is the Landlock ABI the rules are made at; 0 applies none.
	ABI int `json:"abi"`
	// FS restricts the filesystem to Read (read and execute) and Write
	// (read and write); a path that does not exist is skipped.
	FS    bool     `json:"fs"`
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Devices may be read and written (files, not directories).
	Devices []string `json:"devices,omitempty"`
	// Deny may be neither read nor written, over Read and Write (macOS:
	// the gateway's own files; Landlock has no rule that denies).
	Deny []string `json:"deny,omitempty"`
	// Net restricts TCP: "none" (no connect, no bind) or "ports" (connect
	// to Ports only: a list's egress proxy); "" leaves it.
	Net   string   `json:"net,omitempty"`
	Ports []uint16 `json:"ports,omitempty"`
	// NoFile is the open-files limit (soft and hard); 0 leaves it.
	NoFile uint64 `json:"nofile,omitempty"`
	// Cgroups are the cgroup.procs files of the server's cgroups, which
	// the sandbox mode writes itself into first of all.
	Cgroups []string `json:"cgroups,omitempty"`
	// SealCgroups makes every cgroup filesystem read-only to the server
	// (a mount namespace of its own): without Landlock's filesystem
	// rules nothing else keeps it from moving itself out of Cgroups.
	SealCgroups bool `json:"seal_cgroups,omitempty"`
	// Hide are covered in the server's mount namespace: a directory by
	// an empty read-only tmpfs (with the Read and Write paths beneath
	// it bound back), a file (a UNIX socket) by /dev/null. They hold the
	// sockets of the user's session, which Landlock does not govern
	// before ABI 9. Without a mount namespace (not root, and the user
	// namespace was refused: the gateway records the gap) they stay.
	Hide []string `json:"hide,omitempty"`
}

// Applied is a server's confinement as applied, for status.
type Applied struct {
	Mode string `json:"mode"` // enforce | best_effort
	// FS: the filesystem is confined.
	FS bool `json:"fs"`
	// Network is what was asked (all, none, list) and NetworkEnforced
	// whether the kernel refuses other TCP connections. A list is Allow,
	// reached through the egress proxy at Proxy (127.0.0.1:PORT), the one
	// TCP port the kernel lets the server connect to.
	Network         string   `json:"network"`
	Allow           []string `json:"allow,omitempty"`
	Proxy           string   `json:"proxy,omitempty"`
	NetworkEnforced bool     `json:"network_enforced"`
	// NetNS: under network none, the server runs in a network namespace
	// of its own with no interface up (no UDP or DNS either).
	NetNS bool `json:"netns,omitempty"`
	// UserNS: the server runs in a user namespace of its own (mapping
	// only your user), in which it may make the mount namespace that
	// hides the session's sockets (Plan.Hide); NetNS has one already.
	UserNS bool `json:"userns,omitempty"`
	// MemoryMB and Processes are the limits asked for (0: none);
	// *Enforced whether they are.
	MemoryMB          int  `json:"memory_mb,omitempty"`
	MemoryEnforced    bool `json:"memory_enforced"`
	Processes         int  `json:"processes,omitempty"`
	ProcessesEnforced bool `json:"processes_enforced"`
	// StateDir is the server's own directory (its HOME and TMPDIR).
	StateDir string `json:"state_dir,omitempty"`
	// NotEnforced says what was asked and is not applied, and why.
	NotEnforced []string `json:"not_enforced,omitempty"`
	// Gaps are what the mechanism applied does not govern at all
	// (docs/sandbox.md, the threat model).
	Gaps []string `json:"gaps,omitempty"`
}

// Summary is the one-line form status prints: "fs ✓ net none mem — procs —",
// "fs ✓ net allow-list(2) via proxy 127.0.0.1:41234 mem — procs —",
// "fs ✓ net none mem 512 MB procs 64";
// "—" is a limit not asked for or not enforced (NotEnforced says which).
func (a *Applied) Summary() string {
	mark := func(ok bool) string {
		if ok {
			return "✓"
		}
		return "✗"
	}
	net := a.Network
	switch {
	case a.Network == "list":
		net = fmt.Sprintf("allow-list(%d) via proxy %s", len(a.Allow), a.Proxy)
		if !a.NetworkEnforced {
			net = "all"
		}
	case a.Network == "none" && !a.NetworkEnforced:
		net = "all"
	}
	limit := func(v int, enforced bool, unit string) string {
		if v == 0 || !enforced {
			return "—"
		}
		return fmt.Sprintf("%d%s", v, unit)
	}
	return fmt.Sprintf("fs %s net %s mem %s procs %s", mark(a.FS), net, limit(a.MemoryMB, a.MemoryEnforced, " MB"), limit(a.Processes, a.ProcessesEnforced, ""))
}

// Host is what Prepare knows of where the server runs.
type Host struct {
	// Helper is the command of the sandbox mode ({gateway binary, Arg});
	// nil means none, so nothing can be applied.
	Helper []string
	// ABI is the kernel's Landlock ABI (0: none; Linux only).
	ABI int
	// Home is the user's home directory: never granted as a whole.
	Home string
	// StateDir is the server's own directory; Prepare creates it.
	StateDir string
	// Protected are the gateway's own files and directories (config, pin
	// file, snapshots, audit log, token store): a server may never be
	// granted them, nor a directory holding them.
	Protected []string
	// Cgroup is the server's cgroup, made for its memory and process
	// limits (Cgroups.New); nil: none.
	Cgroup *Cgroup
	// NoCgroupJoin leaves the server out of its cgroup (the tests show
	// with it that the limits fail without the join).
	NoCgroupJoin bool
	// Proxy is the server's egress proxy, 127.0.0.1:PORT, for a network
	// list ("": none, so a list cannot be enforced).
	Proxy string
}

// Spec is the server as it would run without a sandbox.
type Spec struct {
	Command string   // as configured: a name looked up in PATH, or a path
	Args    []string // without argv[0]
	Env     []string // its whole environment
	Dir     string
}

// Prepare decides the confinement of a server whose sandbox is on: the
// command to run instead of s (the sandbox mode with its plan), the
// environment it gets (HOME and TMPDIR its state directory), and what is
// applied. Under enforce, a confinement the OS cannot give as asked is an
// error naming what it lacks; under best_effort it is in NotEnforced.
func Prepare(sb config.Sandbox, s Spec, h Host) (argv []string, env []string, a Applied, err error) {
	a = Applied{Mode: sb.Mode, Network: cmpOr(sb.Network.Policy, "all"), MemoryMB: sb.MemoryMB, Processes: sb.Processes, StateDir: h.StateDir}
	if a.Network == "list" {
		a.Allow = slices.Clone(sb.Network.Allow)
	}
	read, write, err := grants(sb, h)
	if err != nil {
		return nil, nil, a, err
	}
	var missing []string
	c := hostCaps(h)
	fsOK := c.fs == ""
	netWhy := c.netNone
	if a.Network == "list" {
		netWhy = c.netList
	}
	netOK := netWhy == ""
	proxyPort, proxyErr := proxyPort(h.Proxy)
	a.FS = fsOK
	if !fsOK {
		missing = append(missing, "filesystem: "+c.fs)
	}
	if a.Network != "all" {
		a.NetworkEnforced = netOK
		switch {
		case !netOK:
			missing = append(missing, "network "+netText(sb.Network)+": "+netWhy)
		case a.Network == "list" && proxyErr != nil:
			a.NetworkEnforced = false
			missing = append(missing, "network "+netText(sb.Network)+": no egress proxy ("+proxyErr.Error()+")")
		case a.Network == "list":
			a.Proxy = h.Proxy
		}
	}
	if sb.MemoryMB > 0 {
		if a.MemoryEnforced = c.memory == ""; !a.MemoryEnforced {
			missing = append(missing, fmt.Sprintf("memory_mb %d: %s", sb.MemoryMB, c.memory))
		}
	}
	if sb.Processes > 0 {
		if a.ProcessesEnforced = c.processes == ""; !a.ProcessesEnforced {
			missing = append(missing, fmt.Sprintf("processes %d: %s", sb.Processes, c.processes))
		}
	}
	if len(missing) > 0 && sb.Mode == config.SandboxEnforce {
		// Nothing is applied: the server does not run.
		a.FS, a.NetworkEnforced, a.NotEnforced, a.Proxy = false, false, missing, ""
		a.MemoryEnforced, a.ProcessesEnforced = false, false
		return nil, nil, a, &RefusedError{Missing: missing}
	}
	a.NotEnforced = append(missing, a.NotEnforced...)

	env = socketEnv(confinedEnv(s.Env, h.StateDir), s.Env, slices.Concat(read, write))
	if a.Proxy != "" {
		env = proxyEnv(env, a.Proxy)
	}
	if h.StateDir != "" {
		if err := os.MkdirAll(filepath.Join(h.StateDir, "tmp"), 0o700); err != nil {
			return nil, nil, a, fmt.Errorf("sandbox: state directory: %w", err)
		}
	}
	// Limits go through the plan where the sandbox mode joins a cgroup
	// (Linux); Windows sets them on the Job Object (startConfined).
	join := (a.MemoryEnforced || a.ProcessesEnforced) && len(h.Cgroup.Join()) > 0
	if h.Helper == nil || !fsOK && !a.NetworkEnforced && !join {
		// Nothing to apply: run it as it is (as the OS's own start
		// resolves it), in its own HOME.
		return append([]string{s.Command}, s.Args...), env, a, nil
	}
	path, err := resolve(s.Command, s.Dir)
	if err != nil {
		return nil, nil, a, err
	}
	p := Plan{Path: path, Args: append([]string{s.Command}, s.Args...), ABI: min(h.ABI, maxABI), NoFile: 4096}
	if join && !h.NoCgroupJoin {
		p.Cgroups = h.Cgroup.Join()
	}
	if fsOK {
		p.FS = true
		p.Read = slices.Concat(systemDirs, runtimeDirs(path, env, h), read)
		p.Write = write
		if h.StateDir != "" {
			p.Write = slices.Concat([]string{realPath(h.StateDir)}, write)
		}
		p.Devices = devices
	}
	if a.NetworkEnforced {
		p.Net = "none"
		if a.Network == "list" {
			p.Net, p.Ports = "ports", []uint16{proxyPort}
		}
	}
	finish(&p, &a, h, s.Env, proxyPort)
	b, err := json.Marshal(p)
	if err != nil {
		return nil, nil, a, err
	}
	return append(slices.Clone(h.Helper), string(b)), env, a, nil
}

// proxyPort is the port of an egress proxy's address (127.0.0.1:PORT).
func proxyPort(addr string) (uint16, error) {
	if addr == "" {
		return 0, errors.New("none was started")
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
		return 0, fmt.Errorf("%q is not a loopback address and port", addr)
	}
	return ap.Port(), nil
}

// proxyVars are the variables through which HTTP clients find a proxy;
// a confined server's are its egress proxy, with no exceptions (a
// client that honours NO_PROXY would otherwise go direct and be refused
// by the kernel).
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"}

// proxyEnv is env with the proxy variables pointing at the egress proxy
// at addr, NO_PROXY empty, and ALL_PROXY (often SOCKS) removed.
func proxyEnv(env []string, addr string) []string {
	out := make([]string, 0, len(env)+6)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(proxyVars, name) {
			out = append(out, kv)
		}
	}
	u := "http://" + addr
	return append(out, "HTTP_PROXY="+u, "HTTPS_PROXY="+u, "http_proxy="+u, "https_proxy="+u, "NO_PROXY=", "no_proxy=")
}

const udpGap = "UDP, so DNS (Landlock governs TCP only)"

// socketsHidden is what is left of UNIX sockets by path where the
// server's mount namespace hides the session's (Plan.Hide).
const socketsHidden = "UNIX sockets by path other than those its mount namespace hides: /run (so /run/user, D-Bus, Docker), ~/.gnupg, the sockets its environment named, and the X11, ssh-agent, tmux and D-Bus sockets in /tmp when it started (connect is not governed by Landlock before ABI 9)"

// WithoutNetNS records that the OS refused the network namespace (err):
// the server runs with Landlock's TCP rules only, and without the mount
// namespace that would hide the session's sockets.
func (a *Applied) WithoutNetNS(err error) {
	a.NetNS = false
	a.Gaps = append(a.Gaps, fmt.Sprintf("%s; the OS refused a network namespace (%v): unprivileged user namespaces are off", udpGap, err))
	a.socketsOpen(err)
}

// WithoutUserNS records that the OS refused the user namespace (err) in
// which the server would hide the session's sockets (UserNS): they stay
// reachable by path.
func (a *Applied) WithoutUserNS(err error) {
	a.UserNS = false
	a.socketsOpen(err)
}

// socketsOpen turns the gap of hidden sockets into that of open ones: the
// server (not root) has no user namespace, so no mount namespace.
func (a *Applied) socketsOpen(err error) {
	if i := slices.Index(a.Gaps, socketsHidden); i >= 0 {
		a.Gaps[i] = fmt.Sprintf("UNIX sockets by path: the session D-Bus (so the Secret Service), ssh-agent, X11, Docker and the rest (connect is not governed by Landlock before ABI 9, and the OS refused the user namespace that would hide them (%v): unprivileged user namespaces are off)", err)
	}
}

// ExposeError is a read or write path that would grant the whole home
// or the gateway's own files: the server is not started, in any mode.
type ExposeError struct{ Path, What string }

func (e *ExposeError) Error() string {
	return fmt.Sprintf("sandbox: %s would expose %s, which no sandbox grants; the server is not started", e.Path, e.What)
}

// Unstartable reports whether err is the sandbox's refusal to start a
// server (RefusedError, ExposeError): trying again changes nothing until
// the configuration does.
func Unstartable(err error) bool {
	var r *RefusedError
	var x *ExposeError
	return errors.As(err, &r) || errors.As(err, &x)
}

// RefusedError is a server under enforce that cannot be confined as
// asked.
type RefusedError struct{ Missing []string }

func (e *RefusedError) Error() string {
	return "sandbox: mode enforce cannot confine it as asked, so it is not started: " + strings.Join(e.Missing, "; ") +
		" (use mode: best_effort to run it with what this OS can apply)"
}

func netText(n config.Network) string {
	if n.Policy == "list" {
		return strings.Join(n.Allow, ",")
	}
	return n.Policy
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resolve finds the program the server's command names, as exec would:
// a path (relative to dir), or a name in the gateway's PATH.
func resolve(command, dir string) (string, error) {
	if config.HasDir(command) {
		if !filepath.IsAbs(command) && dir != "" {
			command = filepath.Join(dir, command)
		}
		return filepath.Abs(command)
	}
	p, err := exec.LookPath(command)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// runtimeDirs are the directories of the server's runtime: its program's
// installation (the directory above bin/, through symlinks: an nvm, volta,
// pyenv or uv prefix), its script's interpreter's, and the directories of
// its PATH, minus any that would expose the home directory or the
// gateway's own files.
func runtimeDirs(path string, env []string, h Host) []string {
	var dirs []string
	add := func(d string) {
		if d == "" || !filepath.IsAbs(d) {
			return
		}
		// What is granted is where d leads (Run refuses a path that is
		// a symbolic link by then): that is what must not be guarded.
		if d = realPath(d); guarded(d, h) == "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	install := func(p string) {
		for _, q := range []string{p, evalSymlinks(p)} {
			if q == "" {
				continue
			}
			d := filepath.Dir(q)
			if b := filepath.Base(d); b == "bin" || b == "shims" { // pyenv's shims run its libexec
				if up := filepath.Dir(d); up != h.Home && up != filepath.Join(h.Home, ".local") && up != "/" {
					d = up
				}
			}
			if guarded(d, h) != "" {
				d = q // a program in a directory that holds the home: itself alone
			}
			add(d)
		}
	}
	install(path)
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	if interp := interpreter(path); interp != "" {
		if filepath.Base(interp) == "env" {
			interp = "" // #!/usr/bin/env NAME: NAME is found in PATH below
		}
		install(interp)
	}
	for _, d := range filepath.SplitList(pathVar) {
		add(d)
		if name := interpreterName(path); name != "" {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				install(filepath.Join(d, name))
			}
		}
	}
	return dirs
}

func evalSymlinks(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return ""
}

// shebang is the first line of a script, "" for a binary.
func shebang(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	if !strings.HasPrefix(line, "#!") {
		return ""
	}
	return strings.TrimSpace(line[2:])
}

// interpreter is a script's interpreter program ("/usr/bin/env" for
// #!/usr/bin/env node).
func interpreter(path string) string {
	f := strings.Fields(shebang(path))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// interpreterName is the program #!/usr/bin/env runs ("node"), or "".
func interpreterName(path string) string {
	f := strings.Fields(shebang(path))
	if len(f) < 2 || filepath.Base(f[0]) != "env" {
		return ""
	}
	for _, a := range f[1:] {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// guarded names what of the gateway's own (or the whole home) granting p
// would expose, or "". The home and the gateway's files are compared as
// named and as their symbolic links lead (a configuration directory that
// is a link into a dotfiles repository is guarded there too), and
// without case where the filesystem usually ignores it (macOS, Windows:
// /users/me is /Users/me there).
func guarded(p string, h Host) string { return guardedFold(p, h, caseless) }

// caseless: this OS's filesystems usually ignore case.
const caseless = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

func guardedFold(p string, h Host, fold bool) string {
	key := func(s string) string {
		if fold {
			return strings.ToLower(s)
		}
		return s
	}
	p = key(filepath.Clean(p))
	if p == "/" {
		return "the whole filesystem"
	}
	if h.Home != "" {
		for _, home := range []string{filepath.Clean(h.Home), realPath(h.Home)} {
			if home = key(home); p == home || beneath(home, p) {
				return "the whole home directory"
			}
		}
	}
	for _, g := range h.Protected {
		if g == "" {
			continue
		}
		for _, named := range []string{filepath.Clean(g), realPath(g)} {
			// Either way: a directory holding one, or a path inside one.
			if k := key(named); k == p || beneath(k, p) || beneath(p, k) {
				return "the gateway's " + named
			}
		}
	}
	return ""
}

// beneath reports whether p lies strictly beneath dir (both clean).
func beneath(p, dir string) bool {
	return strings.HasPrefix(p, dir+string(filepath.Separator)) || dir == string(filepath.Separator) && p != dir && filepath.IsAbs(p)
}

// realPath is p through its symbolic links, as the kernel opens it (and
// Landlock grants it); p cleaned where it does not exist (it is then
// skipped by Run).
func realPath(p string) string {
	if r := evalSymlinks(p); r != "" {
		return r
	}
	return filepath.Clean(p)
}

// grants are the read and write paths of sb as they will be granted:
// through their symbolic links, since Landlock grants what a path leads
// to. A path is refused (ExposeError) when where it leads would expose
// the home or the gateway's files, or when it lies in a directory the
// server may write (its state directory or a write path) and leads out
// of it: a link the server may have made there itself, between two of
// its starts, to be granted what it was not.
func grants(sb config.Sandbox, h Host) (read, write []string, err error) {
	writable := slices.Clone(sb.Write)
	if h.StateDir != "" {
		writable = append(writable, h.StateDir)
	}
	resolve := func(paths []string) ([]string, error) {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			r := realPath(p)
			for _, q := range []string{p, r} {
				if g := guarded(q, h); g != "" {
					return nil, &ExposeError{Path: p, What: g}
				}
			}
			for _, w := range writable {
				if w = filepath.Clean(w); beneath(filepath.Clean(p), w) && r != realPath(w) && !beneath(r, realPath(w)) {
					return nil, &ExposeError{Path: p, What: fmt.Sprintf("%s, through a symbolic link inside %s, which the server may write (and so may have made the link)", r, w)}
				}
			}
			out = append(out, r)
		}
		return out, nil
	}
	if read, err = resolve(sb.Read); err != nil {
		return nil, nil, err
	}
	if write, err = resolve(sb.Write); err != nil {
		return nil, nil, err
	}
	return read, write, nil
}

// confinedEnv is env with HOME, TMPDIR (TMP, TEMP) the state directory,
// and the XDG base directories, which would point into the user's home,
// left to follow HOME.
func confinedEnv(env []string, state string) []string {
	if state == "" {
		return env
	}
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "TMPDIR", "TMP", "TEMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR":
			continue
		}
		out = append(out, kv)
	}
	tmp := filepath.Join(state, "tmp")
	return append(out, "HOME="+state, "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp)
}

// ErrUnsupported is Run on an OS without a sandbox mode.
var ErrUnsupported = errors.New("sandbox: not supported on " + runtime.GOOS)
