package config

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ChainEnv is the environment variable in which a gateway tells every child
// which gateways run above it: a JSON array of their configuration files,
// outermost first, this gateway's own last. A gateway that finds its own
// configuration in the chain it inherited is a recursion (docs/clients.md).
const ChainEnv = "MCP_GATEWAY_CHAIN"

// Self identifies this gateway process: what would start it again.
type Self struct {
	// Executable is this program (os.Executable).
	Executable string
	// Config is the configuration file this gateway reads, absolute: the
	// --config path, or DefaultPath(Home) (which need not exist).
	Config string
	// Chain holds the configuration files of the gateways above this one,
	// from ChainEnv, outermost first.
	Chain []string
	// Home is the home directory, for an entry without --config and for "~/".
	Home string
	// Dir is the working directory, for relative paths.
	Dir string
}

// NewSelf describes this gateway running on configPath ("" for the default
// path) in an environment where lookup reads ChainEnv. Errors finding the
// executable leave Executable empty: then no entry matches it, and only the
// chain protects against recursion.
func NewSelf(configPath, home string, lookup func(string) (string, bool)) Self {
	s := Self{Home: home}
	s.Dir, _ = os.Getwd()
	if exe, err := os.Executable(); err == nil {
		s.Executable = exe
	}
	if configPath == "" {
		configPath = DefaultPath(home)
	}
	s.Config = s.abs(configPath, "")
	if v, ok := lookup(ChainEnv); ok && v != "" {
		// A malformed chain is ignored: it was not written by a gateway.
		_ = json.Unmarshal([]byte(v), &s.Chain)
	}
	return s
}

// Recursive reports whether this gateway's configuration is already served
// by a gateway above it: then it must start nothing.
func (s Self) Recursive() bool {
	for _, c := range s.Chain {
		if sameFile(c, s.Config) {
			return true
		}
	}
	return false
}

// Environ returns environ with ChainEnv set to the chain of the children:
// this gateway's chain plus its own configuration.
func (s Self) Environ(environ []string) []string {
	chain, _ := json.Marshal(append(s.Chain[:len(s.Chain):len(s.Chain)], s.Config))
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, ChainEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, ChainEnv+"="+string(chain))
}

// SelfMatch is how one server entry relates to this gateway.
type SelfMatch struct {
	// Gateway is true when the entry's command is this executable (the same
	// file, symlinks followed).
	Gateway bool
	// Config is the configuration that gateway would read (set when Gateway).
	Config string
	// Loop is true when that configuration is this gateway's own or one of
	// the chain above it: starting the entry would recurse.
	Loop bool
}

// Match reports whether srv would run this gateway, and on which
// configuration. A nested gateway reached through a wrapper (npx, a
// script, a copy of the binary) does not match here; it finds itself in
// ChainEnv and refuses initialize (backends.CodeRecursive).
func (s Self) Match(srv Server) SelfMatch {
	if srv.Command == "" || s.Executable == "" {
		return SelfMatch{}
	}
	cmd := srv.Command
	if strings.ContainsAny(cmd, `/\`) && !filepath.IsAbs(cmd) && srv.Cwd != "" {
		cmd = filepath.Join(srv.Cwd, cmd) // exec runs a relative path from the child's directory
	}
	path, err := exec.LookPath(cmd)
	if err != nil || !sameFile(path, s.Executable) {
		return SelfMatch{}
	}
	m := SelfMatch{Gateway: true, Config: s.abs(configArg(srv.Args, s.Home), srv.Cwd)}
	m.Loop = sameFile(m.Config, s.Config)
	for _, c := range s.Chain {
		m.Loop = m.Loop || sameFile(m.Config, c)
	}
	return m
}

// Reason says why a matching entry is skipped, for logs and status.
func (m SelfMatch) Reason() string {
	return "runs this mcp-gateway again on " + m.Config + " (a gateway never starts itself; see docs/clients.md)"
}

// configArg returns the --config (-c) value of a gateway command line, or
// the default path.
func configArg(args []string, home string) string {
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		if name != "--config" && name != "-c" {
			continue
		}
		if hasVal {
			return val
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return DefaultPath(home)
}

// abs makes p absolute: "~" as the configuration expands it (ExpandHome), relative paths from dir (or Dir).
func (s Self) abs(p, dir string) string {
	p = ExpandHome(p, s.Home)
	if !filepath.IsAbs(p) {
		if dir == "" {
			dir = s.Dir
		}
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// sameFile reports whether a and b name the same file: the same path, or
// the same existing file through links and case-insensitive file systems.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
