package backends

import (
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// A server's process gets only these variables of the gateway's
// environment (plus its own `env`), unless it sets `inherit_env: true`: a
// backend is third-party code, and the gateway's environment holds its own
// secrets (OPENAI_API_KEY, cloud credentials, tokens) that a tool could
// read and return. What is kept is what programs need to run at all, find
// their files, speak the user's language, and reach the network through
// the user's proxy and certificates. See docs/configuration.md.
var (
	envAllow = []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ",
		"TMPDIR", "TEMP", "TMP", "TERM", "COLORTERM", "NO_COLOR",
		"DISPLAY", "WAYLAND_DISPLAY",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
		"http_proxy", "https_proxy", "no_proxy", "all_proxy",
		"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
		"REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
		config.ChainEnv, // the self-recursion marker must reach a nested gateway
	}
	envAllowPrefix = []string{"LC_", "XDG_"}
	// Windows: names are case-insensitive there.
	envAllowWindows = []string{
		"SystemRoot", "SystemDrive", "windir", "ComSpec", "PATHEXT",
		"APPDATA", "LOCALAPPDATA", "USERPROFILE", "USERNAME", "USERDOMAIN",
		"HOMEDRIVE", "HOMEPATH", "ProgramData", "ProgramFiles",
		"ProgramFiles(x86)", "ProgramW6432", "CommonProgramFiles",
		"CommonProgramFiles(x86)", "CommonProgramW6432", "PUBLIC", "ALLUSERSPROFILE",
		"OS", "PROCESSOR_ARCHITECTURE", "NUMBER_OF_PROCESSORS",
	}
)

// childEnviron returns the part of environ ("NAME=value" entries) a server
// inherits: all of it with inherit, else the allowlist for goos.
func childEnviron(environ []string, inherit bool, goos string) []string {
	if inherit {
		return environ
	}
	out := make([]string, 0, 24)
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && envAllowed(name, goos) {
			out = append(out, kv)
		}
	}
	return out
}

func envAllowed(name, goos string) bool {
	eq := func(a, b string) bool { return a == b }
	if goos == "windows" {
		eq = strings.EqualFold
		for _, n := range envAllowWindows {
			if eq(n, name) {
				return true
			}
		}
	}
	for _, n := range envAllow {
		if eq(n, name) {
			return true
		}
	}
	for _, p := range envAllowPrefix {
		if len(name) > len(p) && eq(name[:len(p)], p) {
			return true
		}
	}
	return false
}
