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
