package wire

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestSetStandardHeaders(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"dry":{"type":"boolean","x-mcp-header":"Dry"},
		"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}},
		"absent":{"type":"string","x-mcp-header":"Absent"},
		"verbose":{"type":"boolean","x-mcp-header":"Verbose"},
		"token":{"type":"string","x-mcp-header":"Token"},
		"plain":{"type":"string"}}}`)
	lookup := func(tool string) json.RawMessage {
		if tool == "deploy" {
			return schema
		}
		return nil
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"region":" eu-west ","count":3,"dry":true,"opts":{"tenant":"zürich"},"verbose":null,"token":"=?base64?aGk=?=","plain":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	m, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	bindings := func(tool string) []HeaderBinding { return HeaderBindings(lookup(tool)) }
	if !SetStandardHeaders(h, &m, bindings) {
		t.Fatal("a request of 2026-07-28 was not taken for one")
	}
	want := map[string]string{
		"Mcp-Protocol-Version": "2026-07-28",
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             "deploy",
		"Mcp-Param-Region":     "=?base64?IGV1LXdlc3Qg?=",
		"Mcp-Param-Count":      "3",
		"Mcp-Param-Dry":        "true",
		"Mcp-Param-Tenant":     "=?base64?esO8cmljaA==?=",
		// A value that reads as written in Base64 is written in Base64.
		"Mcp-Param-Token": "=?base64?PT9iYXNlNjQ/YUdrPT89?=",
		// A null argument has no header (as an absent one).
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers %v, want exactly %v", h, want)
	}
	// What is written reads back as the argument it carries.
	args := Member(m.Params, "arguments")
	for _, b := range HeaderBindings(schema) {
		v, ok := ArgumentAt(args, b.Path)
		if !ok || string(v) == "null" {
			continue
		}
		dec, ok := DecodeHeaderValue(h.Get(HeaderParam + b.Header))
		if !ok || !HeaderMatches(dec, v) {
			t.Errorf("%s: header %q does not read back as %s", b.Header, h.Get(HeaderParam+b.Header), v)
		}
	}

	old, _ := Decode([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"region":"x"}}}`))
	h = http.Header{}
	if SetStandardHeaders(h, &old, bindings) || len(h) != 0 {
		t.Errorf("a request of the handshake era got headers: %v", h)
	}
	read, _ := Decode([]byte(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///a\u0001b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	h = http.Header{}
	SetStandardHeaders(h, &read, nil)
	if got, _ := DecodeHeaderValue(h.Get(HeaderName)); got != "file:///a\x01b" {
		t.Errorf("Mcp-Name of a URI with a control byte = %q", h.Get(HeaderName))
	}
}

func TestHeaderMatches(t *testing.T) {
	for _, c := range []struct {
		header, arg string
		want        bool
	}{
		{"abc", `"abc"`, true},
		{"abc", `"abd"`, false},
		{"true", `true`, true},
		{"false", `true`, false},
		{"42", `42`, true},
		{"42", `42.0`, true},
		{"42.5", `42.5`, false}, // not an integer: no header form
		{"9007199254740993", `9007199254740993`, false},
		{"1", `{"a":1}`, false},
		{"0", `null`, false},
		{"", `null`, false},
	} {
		if got := HeaderMatches(c.header, json.RawMessage(c.arg)); got != c.want {
			t.Errorf("HeaderMatches(%q, %s) = %v, want %v", c.header, c.arg, got, c.want)
		}
	}
}
