// Package registrytest serves a fixture MCP registry (API v0.1) from
// server.json entries on disk, for the tests of search and add: an
// httptest server that answers as the official registry does — the
// latest-version search with cursor pagination, one version of a server,
// a server's versions, 404 for what it does not have.
package registrytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config/registry"
)

// Dir is the fixture entries' directory, relative to the module root.
const Dir = "config/registry/testdata/registry"

// Registry is a running fixture registry.
type Registry struct {
	*httptest.Server
	// Requests counts the requests it has answered.
	Requests atomic.Int64
	items    []json.RawMessage
	parsed   []registry.ServerResponse
	pageSize int
}

// New serves the entries in dir (each file an API item: {"server":
// server.json, "_meta": {...}}) with pages of pageSize servers (0: 3, so
// that a search of a few entries already spans pages). It is closed when
// the test ends.
func New(t testing.TB, dir string, pageSize int) *Registry {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture entries in %s: %v", dir, err)
	}
	slices.Sort(files)
	r := &Registry{pageSize: pageSize}
	if r.pageSize <= 0 {
		r.pageSize = 3
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var item registry.ServerResponse
		if err := json.Unmarshal(data, &item); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r.items = append(r.items, json.RawMessage(data))
		r.parsed = append(r.parsed, item)
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	path := req.URL.EscapedPath()
	rest, ok := strings.CutPrefix(path, "/v0.1/servers")
	if !ok || req.Method != http.MethodGet {
		notFound(w, "Endpoint not found")
		return
	}
	if rest == "" {
		r.search(w, req.URL.Query())
		return
	}
	// /{name}/versions[/{version}], the name URL-encoded (its "/" as %2F).
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	if len(parts) < 2 || len(parts) > 3 || parts[1] != "versions" {
		notFound(w, "Endpoint not found")
		return
	}
	name, err := url.PathUnescape(parts[0])
	if err != nil {
		notFound(w, "Server not found")
		return
	}
	var versions []int
	for i, it := range r.parsed {
		if it.Server.Name == name {
			versions = append(versions, i)
		}
	}
	if len(versions) == 0 {
		notFound(w, "Server not found")
		return
	}
	if len(parts) == 2 {
		var list []json.RawMessage
		for _, i := range versions {
			list = append(list, r.items[i])
		}
		writeList(w, list, "")
		return
	}
	version, _ := url.PathUnescape(parts[2])
	for _, i := range versions {
		it := r.parsed[i]
		latest := it.Meta.Official != nil && it.Meta.Official.IsLatest
		if it.Server.Version == version || (version == "latest" && latest) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(r.items[i])
			return
		}
	}
	notFound(w, "Server version not found")
}

// search answers GET /v0.1/servers: the entries whose name holds search
// (without case), the latest versions only when version=latest, a page
// of them after cursor (the last name of the page before).
func (r *Registry) search(w http.ResponseWriter, q url.Values) {
	text := strings.ToLower(q.Get("search"))
	limit := r.pageSize
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 && n < limit {
		limit = n
	}
	type hit struct {
		key  string
		item json.RawMessage
	}
	var hits []hit
	for i, it := range r.parsed {
		if !strings.Contains(strings.ToLower(it.Server.Name), text) {
			continue
		}
		if q.Get("version") == "latest" && (it.Meta.Official == nil || !it.Meta.Official.IsLatest) {
			continue
		}
		hits = append(hits, hit{it.Server.Name + "@" + it.Server.Version, r.items[i]})
	}
	slices.SortFunc(hits, func(a, b hit) int { return strings.Compare(a.key, b.key) })
	if c := q.Get("cursor"); c != "" {
		i := slices.IndexFunc(hits, func(h hit) bool { return h.key > c })
		if i < 0 {
			i = len(hits)
		}
		hits = hits[i:]
	}
	next := ""
	if len(hits) > limit {
		hits = hits[:limit]
		next = hits[limit-1].key
	}
	list := make([]json.RawMessage, len(hits))
	for i, h := range hits {
		list[i] = h.item
	}
	writeList(w, list, next)
}

func writeList(w http.ResponseWriter, items []json.RawMessage, next string) {
	meta := map[string]any{"count": len(items)}
	if next != "" {
		meta["nextCursor"] = next
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"servers": items, "metadata": meta})
}

// notFound answers 404 as the registry does (a problem+json body).
func notFound(w http.ResponseWriter, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(http.StatusNotFound)
	json.NewEncoder(w).Encode(map[string]any{"title": "Not Found", "status": 404, "detail": detail})
}
