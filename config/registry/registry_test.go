package registry_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mcp-gateway/mcp-gateway/backends/testutil" // under Wine, t.TempDir's cleanup works
	"github.com/mcp-gateway/mcp-gateway/config/registry"
	"github.com/mcp-gateway/mcp-gateway/config/registry/registrytest"
)

func fixture(t *testing.T) *registrytest.Registry {
	return registrytest.New(t, filepath.Join("testdata", "registry"), 2)
}

// TestClientSearchPages: a search follows nextCursor to the end, the
// latest version of each server once.
func TestClientSearchPages(t *testing.T) {
	reg := fixture(t)
	c := &registry.Client{BaseURL: reg.URL}
	list, ans, err := c.Search(t.Context(), "modelcontextprotocol")
	if err != nil || ans.Offline {
		t.Fatal(err, ans)
	}
	var got []string
	for _, r := range list {
		got = append(got, r.Server.Name+"@"+r.Server.Version)
	}
	want := "io.github.modelcontextprotocol/everything@2026.8.31 io.github.modelcontextprotocol/filesystem@2026.8.31 io.github.modelcontextprotocol/time@2025.9.25 io.modelcontextprotocol/text-editor@1.0.2"
	if strings.Join(got, " ") != want {
		t.Errorf("search: %v\nwant %s", got, want)
	}
	if n := reg.Requests.Load(); n != 2 {
		t.Errorf("4 servers in pages of 2: %d requests", n)
	}
}

// TestClientBounds: an answer over MaxResponse, or one that is not JSON,
// is an error; a registry that repeats its cursor is not followed forever.
func TestClientBounds(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"servers":[],"x":"`)
		w.Write([]byte(strings.Repeat("a", registry.MaxResponse)))
		fmt.Fprint(w, `"}`)
	}))
	defer big.Close()
	if _, _, err := (&registry.Client{BaseURL: big.URL}).Search(t.Context(), ""); err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Errorf("oversized answer: %v", err)
	}
	requests := 0
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		fmt.Fprintf(w, `{"servers":[],"metadata":{"nextCursor":"c%d"}}`, requests)
	}))
	defer loop.Close()
	if _, _, err := (&registry.Client{BaseURL: loop.URL}).Search(t.Context(), ""); err != nil || requests != registry.MaxPages {
		t.Errorf("endless cursor: %v after %d requests", err, requests)
	}
	two := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"servers":[]} {}`) }))
	defer two.Close()
	if _, _, err := (&registry.Client{BaseURL: two.URL}).Search(t.Context(), ""); err == nil {
		t.Error("two JSON values accepted")
	}
}

// TestCacheOffline: the cache answers for a registry that is down,
// saying so, and is kept within its bounds.
func TestCacheOffline(t *testing.T) {
	reg := fixture(t)
	cache := &registry.Cache{Dir: t.TempDir(), MaxEntries: 3}
	c := &registry.Client{BaseURL: reg.URL, Cache: cache, HTTP: &http.Client{Timeout: 5 * time.Second}}
	if _, _, err := c.Get(t.Context(), "io.github.modelcontextprotocol/time", ""); err != nil {
		t.Fatal(err)
	}
	reg.Close()
	r, ans, err := c.Get(t.Context(), "io.github.modelcontextprotocol/time", "")
	if err != nil || !ans.Offline || r.Server.Version != "2025.9.25" || ans.FetchedAt.IsZero() {
		t.Fatalf("offline get: %v %+v", err, ans)
	}
	for i := range 5 {
		if err := cache.Put(fmt.Sprintf("http://x/%d", i), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if files, _ := os.ReadDir(cache.Dir); len(files) != 3 {
		t.Errorf("cache of 3 entries holds %d files", len(files))
	}
	if _, _, ok := cache.Get("http://x/4"); !ok {
		t.Error("the newest entry was dropped")
	}
}

// TestBuildRules: the order add picks in, exact versions only, deleted
// entries refused.
func TestBuildRules(t *testing.T) {
	pkg := func(typ, id, version string) registry.Package {
		return registry.Package{RegistryType: typ, Identifier: id, Version: version, Transport: registry.Transport{Type: "stdio"}}
	}
	entry := func(pkgs []registry.Package, remotes ...registry.Transport) *registry.ServerResponse {
		return &registry.ServerResponse{Server: registry.ServerJSON{Name: "io.github.x/y", Version: "1.0.0", Packages: pkgs, Remotes: remotes}}
	}
	all := entry([]registry.Package{pkg("oci", "x/y", "1.0.0"), pkg("pypi", "y", "1.0.0"), pkg("npm", "y", "1.0.0")},
		registry.Transport{Type: "sse", URL: "https://x/sse"}, registry.Transport{Type: "streamable-http", URL: "https://x/mcp"})
	for via, want := range map[string]string{"": "https://x/mcp", "remote": "https://x/mcp", "npm": "npx -y y@1.0.0", "pypi": "uvx y==1.0.0", "oci": "docker run -i --rm x/y:1.0.0"} {
		p, err := registry.Build(all, registry.Options{Via: via, Name: "y"})
		if err != nil {
			t.Fatal(via, err)
		}
		got := p.Server.URL
		if got == "" {
			got = strings.Join(append([]string{p.Server.Command}, p.Server.Args...), " ")
		}
		if got != want {
			t.Errorf("via %q: %s, want %s", via, got, want)
		}
	}
	if p, _ := registry.Build(entry(all.Server.Packages), registry.Options{Name: "y"}); p == nil || p.Via != "npm" {
		t.Errorf("without remotes: %+v", p)
	}
	for _, v := range []string{"latest", "^1.2.3", "1.x", ">=1", "", "1.2 || 2"} {
		if _, err := registry.Build(entry([]registry.Package{pkg("npm", "y", v)}), registry.Options{Name: "y"}); err == nil {
			t.Errorf("version %q accepted", v)
		}
	}
	if _, err := registry.Build(entry([]registry.Package{pkg("oci", "x/y:latest", "")}), registry.Options{Name: "y"}); err == nil {
		t.Error("oci image tagged latest accepted")
	}
	deleted := entry([]registry.Package{pkg("npm", "y", "1.0.0")})
	deleted.Meta.Official = &registry.Official{Status: "deleted"}
	if _, err := registry.Build(deleted, registry.Options{Name: "y"}); err == nil || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("deleted entry: %v", err)
	}
	odd := entry([]registry.Package{{RegistryType: "npm", Identifier: "y", Version: "1.0.0", Transport: registry.Transport{Type: "stdio"},
		PackageArguments: []registry.Argument{{Type: "positional", ValueHint: "api key", Input: registry.Input{IsRequired: true, IsSecret: true}}}}})
	if _, err := registry.Build(odd, registry.Options{Name: "y", Vars: map[string]string{"api key": "k"}}); err == nil || !strings.Contains(err.Error(), "cannot name one") {
		t.Errorf("a secret whose name has a space: %v", err)
	}
	http := entry([]registry.Package{{RegistryType: "npm", Identifier: "y", Version: "1.0.0", Transport: registry.Transport{Type: "streamable-http", URL: "http://localhost:{port}/mcp"}}})
	if _, err := registry.Build(http, registry.Options{Name: "y", Via: "npm"}); !errors.Is(err, registry.ErrUnsupported) {
		t.Errorf("an npm package serving HTTP: %v", err)
	}
}
