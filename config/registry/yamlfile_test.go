package registry_test

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/importer"
	"github.com/mcp-gateway/mcp-gateway/config/registry"
)

// TestAddServerForms: the entry goes where each form of the file keeps
// its servers, comments kept, and the result loads with the new server.
func TestAddServerForms(t *testing.T) {
	entry := importer.ServerNode(config.Server{Name: "new", Command: "npx", Args: []string{"-y", "x@1.0.0"}, Enabled: true, Trust: "approve", From: "registry io.github.x/new@1.0.0"})
	entry.HeadComment = "added"
	cases := []struct{ name, in, want string }{
		{"empty", "", "servers:\n  # added\n  - name: new\n    command: npx\n    args: [-y, x@1.0.0]\n    trust: approve\n    from: registry io.github.x/new@1.0.0\n"},
		{"no servers, no newline", "# c\ngateway: {trust: pin}", "# c\ngateway: {trust: pin}\nservers:\n  # added\n  - name: new\n"},
		{"block list at column 0", "servers:\n- name: a\n  command: a\n# trailing\nsearch: {}\n", "servers:\n- name: a\n  command: a\n# added\n- name: new\n"},
		{"flow list", "# keep me\nservers: []   # none yet\n", "# keep me\nservers:"},
		{"null", "servers:\n", "servers:\n  # added\n  - name: new"},
		{"windows line ends", "servers:\r\n  - name: a\r\n    command: a\r\n", "    command: a\r\n  # added\r\n  - name: new\r\n    command: npx\r\n"},
		{"mcpServers map", "mcpServers:\n  # the old one\n  a: {command: a}\n", "  # the old one\n  a: {command: a}\n  # added\n  new:\n    command: npx"},
	}
	for _, c := range cases {
		out, err := registry.AddServer([]byte(c.in), entry)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s: got\n%s\nwant it to hold\n%s", c.name, out, c.want)
		}
		cfg, _, err := config.Load(config.LoadOptions{Path: "/x/config.yaml", Data: out})
		if err != nil {
			t.Errorf("%s: does not load: %v\n%s", c.name, err, out)
			continue
		}
		if last := cfg.Servers[len(cfg.Servers)-1]; last.Name != "new" || last.From != "registry io.github.x/new@1.0.0" {
			t.Errorf("%s: servers %+v", c.name, cfg.Servers)
		}
	}
	if _, err := registry.AddServer([]byte(`{"mcpServers": {}}`), entry); err == nil || !strings.Contains(err.Error(), "JSON") {
		t.Errorf("a JSON file: %v", err)
	}
}
