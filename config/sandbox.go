package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Sandbox is a server's confinement (docs/sandbox.md): a local server's
// own `sandbox:` block, or gateway.sandbox, the default of every local
// server. After Load a server's Sandbox is its effective confinement: each
// key it gives, and gateway.sandbox's for the others.
type Sandbox struct {
	// Mode is enforce (refuse to start a server that cannot be confined
	// as asked), best_effort (confine what the OS allows and say what not)
	// or off (today's behaviour); "" is off.
	Mode string `json:"mode,omitempty"`
	// Read and Write are the paths the server may read (and write)
	// beyond its runtime and its state directory; absolute after Load.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Network is none, all (the default), or a list of host:port.
	Network Network `json:"network,omitzero"`
	// MemoryMB and Processes bound the server's memory and processes; 0
	// means no limit.
	MemoryMB  int `json:"memory_mb,omitempty"`
	Processes int `json:"processes,omitempty"`
}

// The sandbox modes.
const (
	SandboxEnforce    = "enforce"
	SandboxBestEffort = "best_effort"
	SandboxOff        = "off"
)

// On reports whether the sandbox confines anything (mode enforce or
// best_effort).
func (s Sandbox) On() bool { return s.Mode == SandboxEnforce || s.Mode == SandboxBestEffort }

// Network is sandbox.network: none, all, or the host:port list a server
// may connect to. The zero value was not given, which means all.
type Network struct {
	// Policy is "none", "all", "list" or "" (not given).
	Policy string
	// Allow is the list, when Policy is "list".
	Allow []string
}

// MarshalJSON writes the network as the file does: "none", "all" or the
// list.
func (n Network) MarshalJSON() ([]byte, error) {
	if n.Policy == "list" {
		return json.Marshal(n.Allow)
	}
	return json.Marshal(n.Policy)
}

// IsZero reports whether the network was not given (omitzero).
func (n Network) IsZero() bool { return n.Policy == "" }

// network decodes sandbox.network at key: "none", "all" or a list of
// host:port.
func (l *loader) network(e entry, key, canon string, v *Network) bool {
	n := l.resolve(e.val)
	if n == nil {
		return false
	}
	switch {
	case n.Kind == yaml.ScalarNode && !isNull(n):
		if n.Value != "none" && n.Value != "all" {
			l.errLine(n.Line, key, "must be none, all or a list of host:port, not %q", truncate(n.Value, 40))
			return false
		}
		*v = Network{Policy: n.Value}
	case n.Kind == yaml.SequenceNode:
		list, ok := l.strList(n, key)
		if !ok {
			return false
		}
		if len(list) == 0 {
			l.errLine(n.Line, key, "is an empty list; write none for no connections")
			return false
		}
		for i, a := range list {
			if msg := checkHostPort(a); msg != "" {
				l.errLine(n.Line, fmt.Sprintf("%s[%d]", key, i), "%s", msg)
				return false
			}
		}
		*v = Network{Policy: "list", Allow: list}
	default:
		l.errLine(n.Line, key, "must be none, all or a list of host:port, not %s", kindName(n))
		return false
	}
	l.origin[canon] = origin{line: e.line, key: key}
	return true
}

// checkHostPort returns "" when s is host:port with a host and a port
// 1..65535, else what is wrong.
func checkHostPort(s string) string {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Sprintf("must be host:port such as api.github.com:443, not %q", truncate(s, 60))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("port must be a number 1..65535, not %q", truncate(port, 20))
	}
	return ""
}

// checkSandbox checks the sandbox block at path p (a server's
// "servers[0].sandbox", or "gateway.sandbox") and makes its paths
// absolute: "~/" is the home directory, a relative path the file's
// directory.
func (l *loader) checkSandbox(sb *Sandbox, p string) {
	if o, ok := l.origin[p+".mode"]; ok && !slices.Contains([]string{SandboxEnforce, SandboxBestEffort, SandboxOff}, sb.Mode) {
		l.errLine(o.line, o.key, "must be enforce, best_effort or off, not %q", truncate(sb.Mode, 40))
	}
	for _, f := range []struct {
		name  string
		paths []string
	}{{"read", sb.Read}, {"write", sb.Write}} {
		o := l.origin[p+"."+f.name]
		for i, path := range f.paths {
			path = ResolvePath(l.dir, ExpandHome(path, l.home))
			if !filepath.IsAbs(path) {
				l.errLine(o.line, fmt.Sprintf("%s[%d]", o.key, i), "must be an absolute path (or ~/..., or relative to the configuration file), not %q", truncate(path, 60))
			}
			f.paths[i] = filepath.Clean(path)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"memory_mb", sb.MemoryMB}, {"processes", sb.Processes}} {
		if o := l.origin[p+"."+f.name]; f.v < 0 || f.v > 1<<24 {
			l.errLine(o.line, o.key, "must be between 0 (no limit) and %d, got %d", 1<<24, f.v)
		}
	}
}

// sandboxOf merges a server's own sandbox block (at path p) over
// gateway.sandbox: each key the server gives wins.
func (l *loader) sandboxOf(own Sandbox, p string) Sandbox {
	sb := l.cfg.Gateway.Sandbox
	sb.Read, sb.Write = slices.Clone(sb.Read), slices.Clone(sb.Write)
	given := func(k string) bool { _, ok := l.origin[p+".sandbox."+k]; return ok }
	if given("mode") {
		sb.Mode = own.Mode
	}
	if given("read") {
		sb.Read = own.Read
	}
	if given("write") {
		sb.Write = own.Write
	}
	if given("network") {
		sb.Network = own.Network
	}
	if given("memory_mb") {
		sb.MemoryMB = own.MemoryMB
	}
	if given("processes") {
		sb.Processes = own.Processes
	}
	if !sb.On() {
		// Off is the zero block: nothing to show, nothing applied.
		return Sandbox{}
	}
	if len(sb.Read) == 0 {
		sb.Read = nil
	}
	if len(sb.Write) == 0 {
		sb.Write = nil
	}
	return sb
}

// SandboxDir is where each confined server's state directory is kept
// (DIR/NAME, its HOME and TMPDIR): the user's state directory
// ($XDG_STATE_HOME, else ~/.local/state; the local application data
// directory on Windows and macOS), under mcp-gateway/sandbox.
func SandboxDir(home, goos string, getenv func(string) (string, bool)) string {
	return userDir(home, goos, getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"), "Application Support", "sandbox")
}

// sandboxKeys are the keys of a sandbox block, in the file's order.
var sandboxKeys = []string{"mode", "read", "write", "network", "memory_mb", "processes"}

// sandboxSources describes the effective sandbox sb of the server at path
// p (Sources.Sandboxes): each key that the server or gateway.sandbox
// gives, with its value and which of the two it came from. A server whose
// sandbox is off has none, unless its own mode turned gateway.sandbox off.
func (l *loader) sandboxSources(sb Sandbox, p string) map[string]string {
	given := func(key string) bool { _, ok := l.origin[key]; return ok }
	if !sb.On() {
		if given(p+".sandbox.mode") && l.cfg.Gateway.Sandbox.On() {
			return map[string]string{"mode": fmt.Sprintf("%s (%s)", SandboxOff, l.from(p+".sandbox.mode"))}
		}
		return nil
	}
	list := func(v []string) string { return "[" + strings.Join(v, ", ") + "]" }
	network := sb.Network.Policy
	if network == "list" {
		network = list(sb.Network.Allow)
	}
	values := map[string]string{"mode": sb.Mode, "read": list(sb.Read), "write": list(sb.Write), "network": cmp.Or(network, "all"),
		"memory_mb": strconv.Itoa(sb.MemoryMB), "processes": strconv.Itoa(sb.Processes)}
	out := map[string]string{}
	for _, k := range sandboxKeys {
		switch own, dflt := p+".sandbox."+k, "gateway.sandbox."+k; {
		case given(own):
			out[k] = fmt.Sprintf("%s (%s)", values[k], l.from(own))
		case given(dflt):
			out[k] = fmt.Sprintf("%s (from gateway.sandbox: %s)", values[k], l.from(dflt))
		}
	}
	return out
}
