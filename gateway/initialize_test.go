package gateway

import (
	"encoding/json"
	"testing"
)

func TestMergeMember(t *testing.T) {
	caps := json.RawMessage(`{"tools":{"listChanged":true},"resources":{"subscribe":false}}`)
	for _, c := range []struct {
		name, v, want string
	}{
		{"tools", `{"listChanged":false,"x":{}}`, `{"tools":{"listChanged":true,"x":{}},"resources":{"subscribe":false}}`},
		{"resources", `{"subscribe":true}`, `{"tools":{"listChanged":true},"resources":{"subscribe":true}}`},
		{"tasks", `{"list":{},"requests":{"tools":{"call":{}}}}`, `{"tools":{"listChanged":true},"resources":{"subscribe":false},"tasks":{"list":{},"requests":{"tools":{"call":{}}}}}`},
		{"tools", `"odd"`, string(caps)},
	} {
		if got := string(mergeMember(caps, c.name, json.RawMessage(c.v))); got != c.want {
			t.Errorf("mergeMember(%s, %s) = %s, want %s", c.name, c.v, got, c.want)
		}
	}
}

func TestToolDef(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		// Every member stays, in its order; only the name changes.
		{`{"inputSchema":{"type":"object"},"name":"echo","execution":{"taskSupport":"optional"},"x-custom":[1, 2]}`,
			`{"inputSchema":{"type":"object"},"name":"srv.echo","execution":{"taskSupport":"optional"},"x-custom":[1, 2]}`},
		// An input schema without "type":"object" is completed; an output
		// schema that is not an object is dropped.
		{`{"name":"echo","inputSchema":{"properties":{}},"outputSchema":"bad"}`,
			`{"name":"srv.echo","inputSchema":{"properties":{},"type":"object"}}`},
		{`{"name":"echo"}`, `{"name":"srv.echo","inputSchema":{"type":"object"}}`},
	} {
		got, err := toolDef(json.RawMessage(c.raw), "srv.echo")
		if err != nil || string(got) != c.want {
			t.Errorf("toolDef(%s) = %s, %v; want %s", c.raw, got, err, c.want)
		}
	}
	if _, err := toolDef(json.RawMessage(`[]`), "x"); err == nil {
		t.Error("toolDef of an array succeeded")
	}
}
