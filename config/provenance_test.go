package config

import (
	"strings"
	"testing"
)

// TestProvenanceKeys: a server's from and file_sha256 and
// gateway.registry are read and checked.
func TestProvenanceKeys(t *testing.T) {
	load := func(yaml string) (*Config, error) {
		c, _, err := Load(LoadOptions{Path: "/x/config.yaml", Data: []byte(yaml)})
		return c, err
	}
	c, err := load(`
gateway: {registry: {url: "https://mirror.example.com/mcp", timeout_ms: 5000}}
servers:
  - name: brave
    command: npx
    from: registry io.github.brave/brave-search-mcp-server@2.0.58
    file_sha256: fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce
`)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Servers[0]
	if s.From != "registry io.github.brave/brave-search-mcp-server@2.0.58" || s.FileSHA256 != "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce" {
		t.Errorf("from %q, file_sha256 %q", s.From, s.FileSHA256)
	}
	if r := c.Gateway.Registry; r.URL != "https://mirror.example.com/mcp" || r.TimeoutMS != 5000 {
		t.Errorf("gateway.registry: %+v", r)
	}
	if c, _ := load(""); c.Gateway.Registry.URL != DefaultRegistryURL {
		t.Errorf("default registry %q", c.Gateway.Registry.URL)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"servers: [{name: a, command: x, from: npm}]", "servers[0].from: must be registry NAME@VERSION"},
		{"servers: [{name: a, command: x, from: registry brave@latest@x}]", "servers[0].from: must be registry NAME@VERSION (such as"},
		{"servers: [{name: a, command: x, file_sha256: ABC}]", "servers[0].file_sha256: must be a SHA-256 in hex"},
		{"gateway: {registry: {url: ftp://x}}", "gateway.registry.url: must be an http or https URL"},
		{"gateway: {registry: {timeout_ms: 0}}", "gateway.registry.timeout_ms: must be between 1"},
	} {
		_, err := load(bad.yaml)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: got %v, want %q", bad.yaml, err, bad.want)
		}
	}
}
