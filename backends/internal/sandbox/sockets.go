package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// socketVars are the variables through which programs find the user's
// session services by a UNIX socket: the session and system D-Bus (and
// through the session bus the Secret Service, every secret of the
// keychain), ssh-agent, gpg-agent, the X11 and Wayland displays, Docker
// (root on the host), tmux and PulseAudio. A confined server's
// environment loses each one whose socket is not granted (socketEnv).
var socketVars = []string{
	"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "SSH_AUTH_SOCK", "GPG_AGENT_INFO",
	"DISPLAY", "WAYLAND_DISPLAY", "DOCKER_HOST", "TMUX", "PULSE_SERVER",
}

// socketPaths are the UNIX socket paths value of variable name points
// at, and whether it points at one at all: a TCP address (a remote
// DOCKER_HOST or DISPLAY) is the network's to govern. An abstract socket
// or a form not understood points at one with no path, which no grant
// can cover. env is the server's original environment (WAYLAND_DISPLAY
// is relative to its XDG_RUNTIME_DIR).
func socketPaths(name, value string, env []string) (paths []string, local bool) {
	switch name {
	case "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS":
		for _, addr := range strings.Split(value, ";") {
			transport, params, _ := strings.Cut(addr, ":")
			if transport != "unix" {
				continue // tcp: the network's
			}
			local = true
			for _, kv := range strings.Split(params, ",") {
				if p, ok := strings.CutPrefix(kv, "path="); ok {
					paths = append(paths, p)
				}
			}
		}
		return paths, local
	case "SSH_AUTH_SOCK", "TMUX", "GPG_AGENT_INFO":
		p, _, _ := strings.Cut(value, ",") // TMUX: path,pid,session
		if name == "GPG_AGENT_INFO" {
			p, _, _ = strings.Cut(value, ":") // path:pid:protocol
		}
		return []string{p}, true
	case "DISPLAY":
		host, rest, ok := strings.Cut(value, ":")
		if !ok || host != "" && host != "unix" {
			return nil, !ok // host:N is TCP
		}
		n, _, _ := strings.Cut(rest, ".")
		return []string{"/tmp/.X11-unix/X" + n}, true
	case "WAYLAND_DISPLAY":
		if filepath.IsAbs(value) {
			return []string{value}, true
		}
		if dir := lookup(env, "XDG_RUNTIME_DIR"); dir != "" {
			return []string{filepath.Join(dir, value)}, true
		}
		return nil, true
	case "DOCKER_HOST", "PULSE_SERVER":
		if p, ok := strings.CutPrefix(value, "unix://"); ok {
			return []string{p}, true
		}
		if p, ok := strings.CutPrefix(value, "unix:"); ok {
			return []string{p}, true
		}
		return nil, strings.HasPrefix(value, "/")
	}
	return nil, false
}

// socketEnv is the confined env without the socketVars whose sockets are
// not granted: a variable stays only if every socket it names lies in a
// read or write path (the path itself or a directory above it) — the
// user who gives a git server `read: [$SSH_AUTH_SOCK]` keeps its agent.
// A relative WAYLAND_DISPLAY that stays is made absolute, since
// XDG_RUNTIME_DIR does not. orig is the server's environment before
// confinedEnv.
func socketEnv(env, orig, granted []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !slices.Contains(socketVars, name) {
			out = append(out, kv)
			continue
		}
		paths, local := socketPaths(name, value, orig)
		if !local {
			out = append(out, kv)
			continue
		}
		if len(paths) > 0 && allGranted(paths, granted) {
			if name == "WAYLAND_DISPLAY" {
				kv = name + "=" + paths[0]
			}
			out = append(out, kv)
		}
	}
	return out
}

func allGranted(paths, granted []string) bool {
	for _, p := range paths {
		if !grantedPath(realPath(p), granted) {
			return false
		}
	}
	return true
}

// grantedPath reports whether p is one of granted or lies beneath one.
func grantedPath(p string, granted []string) bool {
	return slices.ContainsFunc(granted, func(g string) bool { return p == g || beneath(p, g) })
}

// lookup is the value of name in env, "" if unset.
func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val
		}
	}
	return v
}
