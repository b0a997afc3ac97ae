package gateway

import (
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// BenchmarkToolsList is tools/list from the gateway's own tables, with one
// testbackend server (shared by everyone: no upstream_auth). "session": a
// session's list, its tables built; "sessionless": a request of
// 2026-07-28 served on its own, whose front builds its tables first. A
// server reached per caller must cost these nothing (callerroutes.go).
func BenchmarkToolsList(b *testing.B) {
	g, ctx := newGateway(b, nil, testServer("tb"))
	g.opts.Backends.Wait(ctx, 0)
	b.Run("session", func(b *testing.B) {
		f := g.newFront(frontOptions{})
		defer g.dropFront(f)
		f.rebuild(ctx, always)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.list(ctx, "tools/list", nil, wire.HandshakeEra); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sessionless", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f := g.newFront(frontOptions{version: "2026-07-28"})
			if _, err := f.list(ctx, "tools/list", nil, wire.PerRequestEra); err != nil {
				b.Fatal(err)
			}
			g.dropFront(f)
		}
	})
}
