package backends

import (
	"slices"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

func TestChildEnviron(t *testing.T) {
	environ := []string{"PATH=/bin", "OPENAI_API_KEY=k", "LC_ALL=C", "LC_=x", "XDG_DATA_HOME=/d", "HTTPS_PROXY=p",
		"Path=C:\\w", "SYSTEMROOT=C:\\Windows", "APPDATA=a", "GITHUB_TOKEN=t", config.ChainEnv + "=c", "weird"}
	for _, c := range []struct {
		goos    string
		inherit bool
		want    []string
	}{
		{"linux", false, []string{"PATH=/bin", "LC_ALL=C", "XDG_DATA_HOME=/d", "HTTPS_PROXY=p", config.ChainEnv + "=c"}},
		{"windows", false, []string{"PATH=/bin", "LC_ALL=C", "XDG_DATA_HOME=/d", "HTTPS_PROXY=p", "Path=C:\\w", "SYSTEMROOT=C:\\Windows", "APPDATA=a", config.ChainEnv + "=c"}},
		{"linux", true, environ},
	} {
		if got := childEnviron(environ, c.inherit, c.goos); !slices.Equal(got, c.want) {
			t.Errorf("%s inherit=%t:\n got %q\nwant %q", c.goos, c.inherit, got, c.want)
		}
	}
}
