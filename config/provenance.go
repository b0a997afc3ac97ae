package config

import (
	"regexp"
	"strings"
)

// DefaultRegistryURL is gateway.registry.url's default: the official MCP
// registry.
const DefaultRegistryURL = "https://registry.modelcontextprotocol.io"

// Registry configures the MCP registry `search` and `add` read
// (docs/registry.md).
type Registry struct {
	// URL is the registry's root (API v0.1 below it): the official one, or
	// a company's mirror.
	URL string `json:"url"`
	// TimeoutMS bounds each request to it.
	TimeoutMS int `json:"timeout_ms"`
}

// RegistryCacheDir is where the registry's answers are kept for offline
// search: mcp-gateway/registry in the user's cache directory (as
// SnapshotDir).
func RegistryCacheDir(home, goos string, getenv func(string) (string, bool)) string {
	return userDir(home, goos, getenv, "XDG_CACHE_HOME", ".cache", "Caches", "registry")
}

var (
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// fromRegistry is a server entry's from: registry NAME@VERSION, with
	// NAME in the registry's reverse-DNS form.
	fromRegistry = regexp.MustCompile(`^registry [A-Za-z0-9.-]+/[A-Za-z0-9._-]+@[A-Za-z0-9][A-Za-z0-9._+-]*$`)
)

// checkFrom returns "" when from is a provenance the gateway knows, and
// otherwise what is wrong.
func checkFrom(from string) string {
	if fromRegistry.MatchString(from) {
		return ""
	}
	if strings.HasPrefix(from, "registry ") {
		return "must be registry NAME@VERSION (such as registry io.github.owner/server@1.2.3), not " + quoteShort(from)
	}
	return "must be registry NAME@VERSION, as mcp-gateway add writes it, not " + quoteShort(from)
}

func quoteShort(s string) string { return `"` + truncate(s, 80) + `"` }
