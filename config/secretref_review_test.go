package config

import (
	"strings"
	"testing"
)

// TestSecretRefInDefault: a secret reference as a ${VAR:-default}'s
// default is an error naming the key, in env and args (where a reference
// is allowed) as in a url (where it is not), never the reference's text
// given to the server as its value.
func TestSecretRefInDefault(t *testing.T) {
	for key, entry := range map[string]string{
		"servers[0].env.TOKEN": `{command: x, env: {TOKEN: "${GH_TOKEN:-${secret:gh.TOKEN}}"}}`,
		"servers[0].args[0]":   `{command: x, args: ["--t=${GH_TOKEN:-${secret:gh.TOKEN}}"]}`,
		"servers[0].url":       `{url: "https://x.example/${GH_TOKEN:-${secret:gh.TOKEN}}"}`,
	} {
		errs := mustFail(t, "servers:\n  - name: s\n    <<: "+entry+"\n", nil)
		if e := findErr(t, errs, key); !strings.Contains(e.Msg, "cannot have a secret as its default") {
			t.Errorf("%s: %q", key, e.Msg)
		}
	}
}

// TestSecretHeaderInClear: a secret in the headers of a remote server on
// another machine over plain http is a configuration error at its key;
// https, or http to a loopback host, is not.
func TestSecretHeaderInClear(t *testing.T) {
	errs := mustFail(t, `servers:
  - name: s
    url: http://mcp.example.com/mcp
    headers:
      X-Trace: plain
      Authorization: Bearer ${secret:s.KEY}
`, nil)
	if e := findErr(t, errs, "servers[0].headers.Authorization"); !strings.Contains(e.Msg, "would travel in clear to mcp.example.com") || e.Line != 6 {
		t.Errorf("line %d %q", e.Line, e.Msg)
	}
	for _, u := range []string{"https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://localhost/mcp", "http://[::1]:9/mcp"} {
		mustLoad(t, "servers:\n  - name: s\n    url: "+u+"\n    headers: {Authorization: \"Bearer ${secret:s.KEY}\"}\n", nil, Flags{})
	}
}
