package main

import (
	"encoding/json"
	"testing"
)

// Backends are declared the client's own capabilities as the client wrote
// them (roots, sampling, elicitation, extensions such as MCP Apps', and
// capabilities the gateway does not know), but tasks and experimental,
// whose requests the gateway cannot relay,
// and the client's initialize is answered with the backends' instructions,
// each under its server's name, and the union of their capabilities.
func TestInitializeCarriesClientAndBackends(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("a", "-instructions", "Call a.echo first."), tb("b", "-resources"), tb("c", "-instructions", "Nothing else."))
	for _, c := range []struct{ name, caps, want string }{
		{"url elicitation, no sampling", `{"elicitation":{"url":{},"form":{}},"experimental":{"x":{}},"roots":{"listChanged":true}}`, `{"elicitation":{"url":{},"form":{}},"roots":{"listChanged":true}}`},
		{"extensions, tasks, a capability of the future", `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"example.com/x":{"v":[1,2]}},"tasks":{"list":{}},"future":{"n":12345678901234567890},"sampling":{}}`, `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"example.com/x":{"v":[1,2]}},"future":{"n":12345678901234567890},"sampling":{}}`},
		{"nothing", `{}`, `{}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, init := initSession(t, startGateway(t, baseEnv(t), "--stdio", "--config", cfg), "e2e", c.caps)
			res := init.Result(t)
			if got, want := res["instructions"], "## a\n\nCall a.echo first.\n\n## c\n\nNothing else."; got != want {
				t.Errorf("instructions %q, want %q", got, want)
			}
			caps, _ := res["capabilities"].(map[string]any)
			resources, _ := caps["resources"].(map[string]any)
			if caps["tools"] == nil || caps["logging"] == nil || resources["subscribe"] != true {
				t.Errorf("capabilities %v lack the backends'", caps)
			}
			for _, server := range []string{"a", "b"} {
				got, _ := json.Marshal(s.structured(server+".stats", `{}`)["capabilities"])
				if canonical(got) != canonical(json.RawMessage(c.want)) {
					t.Errorf("%s was declared %s, want %s", server, got, c.want)
				}
			}
		})
	}
}
