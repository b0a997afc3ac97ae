package gateway

import (
	"context"
	"sync"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
)

// rebuild builds the tables when its when says, and only then: each step
// tells by the stored tables' identity whether it built.
func TestRebuildWhen(t *testing.T) {
	g, ctx := newGateway(t, nil, testServer("tb"))
	g.opts.Backends.Wait(ctx, 0)
	f := g.newFront(frontOptions{})
	defer g.dropFront(f)

	f.rebuild(ctx, ifBuilt)
	if f.tab.Load() != nil {
		t.Fatal("ifBuilt built tables never built")
	}
	f.rebuild(ctx, ifNone)
	first := f.tab.Load()
	if first == nil || len(first.tools) == 0 {
		t.Fatal("ifNone built no tables")
	}
	if f.rebuild(ctx, ifNone); f.tab.Load() != first {
		t.Error("ifNone built tables already built")
	}
	if f.rebuild(ctx, ifBuilt); f.tab.Load() == first {
		t.Error("ifBuilt did not rebuild built tables")
	}
	built := f.tab.Load()
	cut, cancel := context.WithCancel(ctx)
	cancel()
	if f.rebuild(cut, settled); f.tab.Load() != built {
		t.Error("settled built after its wait was cut short")
	}
	if f.rebuild(ctx, settled); f.tab.Load() == built {
		t.Error("settled did not build the first time")
	}
	settledOnce := f.tab.Load()
	if f.rebuild(ctx, settled); f.tab.Load() != settledOnce {
		t.Error("settled built again once settled")
	}
	if f.rebuild(ctx, always); f.tab.Load() == settledOnce {
		t.Error("always did not rebuild")
	}
}

// A request reads the tables, what the client declared and the caller's
// grant without a lock while they are rebuilt, declared and swapped:
// under -race, any write to a stored value fails this test.
func TestFrontStateConcurrentReaders(t *testing.T) {
	g, ctx := newGateway(t, nil, testServer("tb"))
	g.opts.Backends.Wait(ctx, 0)
	f := g.newFront(frontOptions{})
	defer g.dropFront(f)
	f.rebuild(ctx, always)
	name := g.namer(false).name("tb", "echo")
	if _, ok := f.lookupTool(name); !ok {
		t.Fatalf("%s not in the tables", name)
	}

	var wg sync.WaitGroup
	const rounds = 50
	wg.Add(4)
	go func() {
		defer wg.Done()
		for range rounds {
			f.rebuild(ctx, always)
		}
	}()
	go func() {
		defer wg.Done()
		for range rounds {
			f.setCaller(ctx)
		}
	}()
	go func() {
		defer wg.Done()
		f.identify("some client", nil, "2025-11-25")
	}()
	go func() {
		defer wg.Done()
		for range rounds {
			if _, ok := f.lookupTool(name); !ok {
				t.Errorf("%s left the tables while they were rebuilt", name)
				return
			}
			if _, err := f.list(ctx, "tools/list", nil, wire.HandshakeEra); err != nil {
				t.Error(err)
				return
			}
			f.hidden(policy.Tool, name)
			_ = f.backendCaps(nil)
		}
	}()
	wg.Wait()
	if d := f.declared(); !d.identified || d.client != "some client" {
		t.Errorf("declared %+v, want some client's", d)
	}
}

// BenchmarkFrontReads is what every tools/call reads of its front — the
// route, the caller's identity and the capabilities its backend is told —
// from every core at once, as a session's calls do.
func BenchmarkFrontReads(b *testing.B) {
	g, ctx := newGateway(b, nil, testServer("tb"))
	g.opts.Backends.Wait(ctx, 0)
	f := g.newFront(frontOptions{})
	defer g.dropFront(f)
	f.rebuild(ctx, always)
	name := g.namer(false).name("tb", "echo")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := f.lookupTool(name); !ok {
				b.Error("no route")
				return
			}
			_ = f.callerIdentity()
			_ = f.backendCaps(nil)
		}
	})
}
