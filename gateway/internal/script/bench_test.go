package script

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkRunEmpty is the fixed cost of a run: a fresh VM, the prelude, a
// trivial script, closing the VM.
func BenchmarkRunEmpty(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := Run(ctx, `return 1`, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTenCalls is a run making ten tool calls, five at a time, to a
// Call in the process: the engine's cost per call on top of the fixed cost.
func BenchmarkRunTenCalls(b *testing.B) {
	ctx := context.Background()
	result := json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"id":1,"name":"entity"}}`)
	call := func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return result, nil }
	src := `
		const ids = [];
		for (let i = 0; i < 5; i++) ids.push((await tools["srv.create"]({name: "e" + i})).id);
		const all = await Promise.all(ids.map(id => tools["srv.read"]({id})));
		return all.length`
	for b.Loop() {
		res, err := Run(ctx, src, Options{Call: call})
		if err != nil || res.Calls != 10 {
			b.Fatal(res.Calls, err)
		}
	}
}
