package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// appsBackends are 3 backends of 50 tools and 50 resources each, modelled
// on the system monitor's (its tool definitions, with output schema and
// both forms of _meta's UI URI). With scheme "ui://" every tool and
// resource is rewritten (apps.go); with "uj://", a scheme of the same
// length that is not, they are the same work without the rewrite.
func appsBackends(scheme string) ([]backends.Tool, []backends.Resource) {
	var tools []backends.Tool
	var res []backends.Resource
	for s := range 3 {
		server := fmt.Sprintf("server%d", s)
		for i := range 50 {
			uri := fmt.Sprintf("%s%s-monitor/app-%d.html", scheme, server, i)
			name := fmt.Sprintf("get-system-info-%d", i)
			tools = append(tools, backends.Tool{Server: server, Name: name, Raw: json.RawMessage(`{"name":"` + name + `","title":"Get System Info","description":"Returns system information, including hostname, platform, CPU info, and memory.","inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"object","properties":{"hostname":{"type":"string"},"platform":{"type":"string"},"arch":{"type":"string"},"cpu":{"type":"object","properties":{"model":{"type":"string"},"count":{"type":"number"}},"required":["model","count"]},"memory":{"type":"object","properties":{"totalBytes":{"type":"number"}},"required":["totalBytes"]}},"required":["hostname","platform","arch","cpu","memory"]},"_meta":{"ui":{"resourceUri":"` + uri + `"},"ui/resourceUri":"` + uri + `"}}`)})
			res = append(res, backends.Resource{Server: server, URI: uri, Raw: json.RawMessage(`{"uri":"` + uri + `","name":"` + uri + `","mimeType":"text/html;profile=mcp-app","description":"System Monitor UI"}`)})
		}
	}
	return tools, res
}

// BenchmarkAppsRewrite measures what MCP Apps' rewriting costs the lists.
// Each op does the same work twice, alternating which goes first: on
// definitions with ui:// URIs (rewritten) and on the same with a scheme
// that is not rewritten (not); rewritten/not is the rewrite's cost.
// tool-table is building the tool table (once per change of a backend's
// tools, shared by every session); resource-table the resource tables
// (per session, as each front syncs); tools-list and resources-list
// answering the request from the tables.
func BenchmarkAppsRewrite(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	g := New(Options{})
	prefixes := map[string]string{"server0": "server0", "server1": "server1", "server2": "server2"}
	type side struct {
		tools []backends.Tool
		res   []backends.Resource
		f     *front
	}
	var sides [2]side // rewritten, not
	for i, scheme := range []string{"ui://", "uj://"} {
		tools, res := appsBackends(scheme)
		routes, order := g.buildToolRoutes(g.namer(false), tools, prefixes)
		f := g.newFront(frontOptions{})
		f.settled, f.synced = true, true
		t := new(tables)
		for _, name := range order {
			t.toolDefs = append(t.toolDefs, routes[name].def)
		}
		t.resourceDefs = resourceTables(res, log).resources
		f.tab.Store(t)
		b.Cleanup(func() { g.dropFront(f) })
		sides[i] = side{tools, res, f}
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		work func(side)
	}{
		{"tool-table", func(s side) { g.buildToolRoutes(g.namer(false), s.tools, prefixes) }},
		{"resource-table", func(s side) { resourceTables(s.res, log) }},
		{"tools-list", func(s side) { s.f.list(ctx, "tools/list", nil, wire.HandshakeEra) }},
		{"resources-list", func(s side) { s.f.list(ctx, "resources/list", nil, wire.HandshakeEra) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var spent [2]time.Duration
			for i := 0; b.Loop(); i++ {
				for k := range 2 {
					which := (i + k) % 2
					start := time.Now()
					c.work(sides[which])
					spent[which] += time.Since(start)
				}
			}
			b.ReportMetric(float64(spent[0].Microseconds())/float64(b.N), "rewritten-µs")
			b.ReportMetric(float64(spent[1].Microseconds())/float64(b.N), "not-µs")
			b.ReportMetric(float64(spent[0])/float64(spent[1]), "rewritten/not")
		})
	}
}

// BenchmarkAppsReadResult measures the one change the gateway makes to a
// UI resource's read result, the contents' uri, on the system monitor's
// real HTML (418 KiB): the HTML itself is copied, never decoded. valid is
// the check every message gets on arrival (wire.Valid), for scale.
func BenchmarkAppsReadResult(b *testing.B) {
	html, err := os.ReadFile(filepath.Join("..", "node_modules", "@modelcontextprotocol", "server-system-monitor", "dist", "mcp-app.html"))
	if err != nil {
		b.Skip("the npm peers are not installed (scripts/npm-peers): ", err)
	}
	text, _ := json.Marshal(string(html))
	res := json.RawMessage(`{"contents":[{"uri":"ui://system-monitor/mcp-app.html","mimeType":"text/html;profile=mcp-app","text":` + string(text) + `}]}`)
	r := resourceRoute{server: "sysmon", own: "ui://system-monitor/mcp-app.html", ui: true}
	if out := r.shownContents(res); !bytes.Contains(out, text) || !bytes.Contains(out, []byte(`"uri":"ui://sysmon/system-monitor/mcp-app.html"`)) {
		b.Fatalf("shownContents changed the HTML or not the uri")
	}
	b.Run("shown", func(b *testing.B) {
		b.SetBytes(int64(len(res)))
		for b.Loop() {
			r.shownContents(res)
		}
	})
	b.Run("valid", func(b *testing.B) {
		b.SetBytes(int64(len(res)))
		for b.Loop() {
			wire.Valid(res)
		}
	})
}
