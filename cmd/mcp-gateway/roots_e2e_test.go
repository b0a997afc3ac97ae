package main

import (
	"fmt"
	"testing"
)

// The client's notifications/roots/list_changed reaches the backends.
func TestRootsListChangedReachesBackends(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, tb("a"), tb("b")))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"e2e","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	if r := p.readLine(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	p.send(req("l", "tools/list", `{}`) + "\n") // the backends are ready once it is answered
	p.readLine()
	p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}` + "\n")
	for _, server := range []string{"a", "b"} {
		p.send(req(server, "tools/call", `{"name":"`+server+`.stats","arguments":{}}`) + "\n")
		r := p.readLine()
		res, _ := r["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		notes, _ := sc["notifications"].(map[string]any)
		if fmt.Sprint(notes["notifications/roots/list_changed"]) != "1" {
			t.Errorf("%s received %v", server, r)
		}
	}
}
