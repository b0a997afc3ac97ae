package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestSecretRefs: ${secret:NAME} in a server's env, headers and args is
// kept as written by Load (next to ${VAR}, expanded in the same pass), and
// WithSecrets puts the values in without expanding anything in them or in
// what a variable expanded to.
func TestSecretRefs(t *testing.T) {
	c, src := mustLoad(t, `servers:
  - name: gh
    command: gh-server
    args: ["--token=${secret:gh.TOKEN}", "${HOSTNAME_X}", plain]
    env:
      GITHUB_TOKEN: ${secret:gh.TOKEN}
      MIXED: "${USERX}:${secret:gh.other-1}"
      FROM_VAR: ${TRICK}
  - name: remote
    url: https://mcp.example/mcp
    headers:
      Authorization: Bearer ${secret:remote.KEY}
  - name: none
    command: x
    env: {A: b}
`, map[string]string{"HOSTNAME_X": "h", "USERX": "u", "TRICK": "${secret:gh.TOKEN}"}, Flags{})
	gh, remote, none := c.Servers[0], c.Servers[1], c.Servers[2]
	if got, want := gh.SecretNames(), []string{"gh.TOKEN", "gh.other-1"}; !slices.Equal(got, want) {
		t.Errorf("SecretNames = %q, want %q", got, want)
	}
	if gh.Env["GITHUB_TOKEN"] != "${secret:gh.TOKEN}" || gh.Env["MIXED"] != "u:${secret:gh.other-1}" || gh.Args[0] != "--token=${secret:gh.TOKEN}" {
		t.Errorf("Load did not keep the references: env %q args %q", gh.Env, gh.Args)
	}
	if none.SecretNames() != nil {
		t.Errorf("a server without references has names %q", none.SecretNames())
	}
	values := map[string]string{"gh.TOKEN": "tok-${HOSTNAME_X}", "gh.other-1": "o$${x}", "remote.KEY": "rk"}
	get := func(name string) (string, error) {
		v, ok := values[name]
		if !ok {
			return "", errors.New("not set")
		}
		return v, nil
	}
	r, err := gh.WithSecrets(get)
	if err != nil {
		t.Fatal(err)
	}
	if r.Env["GITHUB_TOKEN"] != "tok-${HOSTNAME_X}" || r.Env["MIXED"] != "u:o$${x}" || r.Args[0] != "--token=tok-${HOSTNAME_X}" || r.Args[1] != "h" {
		t.Errorf("WithSecrets: env %q args %q", r.Env, r.Args)
	}
	// A variable's value that looks like a reference is text: one pass.
	if r.Env["FROM_VAR"] != "${secret:gh.TOKEN}" {
		t.Errorf("a variable's value was expanded again: FROM_VAR = %q", r.Env["FROM_VAR"])
	}
	if gh.Env["GITHUB_TOKEN"] != "${secret:gh.TOKEN}" || r.SecretNames() != nil {
		t.Errorf("WithSecrets changed the server it was called on, or left references: %q", gh.Env)
	}
	rr, err := remote.WithSecrets(get)
	if err != nil || rr.Headers["Authorization"] != "Bearer rk" {
		t.Errorf("remote headers = %q, %v", rr.Headers, err)
	}
	delete(values, "gh.other-1")
	if _, err := gh.WithSecrets(get); err == nil || !strings.Contains(err.Error(), `env.MIXED of server "gh": not set`) {
		t.Errorf("a missing secret: %v", err)
	}

	var out strings.Builder
	if err := WriteShowConfig(&out, "test", c, src); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"GITHUB_TOKEN": "${secret:gh.TOKEN}"`, `"MIXED": "${USERX}:${secret:gh.other-1}"`, `"--token=${secret:gh.TOKEN}"`, `"Authorization": "Bearer ${secret:remote.KEY}"`, `"FROM_VAR": "***"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--show-config lacks %s:\n%s", want, out.String())
		}
	}
}

// TestSecretRefsBad: a reference where none may be, or that is malformed,
// is an error at its key and line.
func TestSecretRefsBad(t *testing.T) {
	for _, tt := range []struct {
		name, entry, key, msg string
		line                  int
	}{
		{"url", "url: \"https://x.example/${secret:a}\"", "servers[0].url", "may be used only in a server's env, headers and args", 3},
		{"command", "command: \"${secret:a}\"", "servers[0].command", "may be used only", 3},
		{"cwd", "{command: x, cwd: \"${secret:a}\"}", "servers[0].cwd", "may be used only", 3},
		{"oauth", "{url: https://x.example, oauth: {client_secret: \"${secret:a}\"}}", "servers[0].oauth.client_secret", "may be used only", 3},
		{"empty", "{command: x, env: {A: \"${secret:}\"}}", "servers[0].env.A", "is not a secret's name", 3},
		{"slash", "{command: x, env: {A: \"${secret:a/b}\"}}", "servers[0].env.A", "is not a secret's name", 3},
		{"space", "{command: x, headers: {A: \"${secret:a b}\"}}", "servers[0].headers.A", "is not a secret's name", 3},
		{"default", "{command: x, args: [\"${secret:a:-x}\"]}", "servers[0].args[0]", "cannot have a default", 3},
		{"unterminated", "{command: x, env: {A: \"${secret:a\"}}", "servers[0].env.A", "unterminated", 3},
		{"long", "{command: x, env: {A: \"${secret:" + strings.Repeat("a", 201) + "}\"}}", "servers[0].env.A", "is not a secret's name", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			entry := tt.entry
			if !strings.HasPrefix(entry, "{") {
				entry = "{" + entry + "}"
			}
			errs := mustFail(t, "servers:\n  - name: s\n    <<: "+entry+"\n", nil)
			e := findErr(t, errs, tt.key)
			if !strings.Contains(e.Msg, tt.msg) || e.Line == 0 {
				t.Errorf("%s: line %d %q; want %q", tt.key, e.Line, e.Msg, tt.msg)
			}
		})
	}
	if !IsSecretName("github.GITHUB_TOKEN") || !IsSecretName(strings.Repeat("a", 200)) || IsSecretName("") || IsSecretName("a:b") || IsSecretName("ä") {
		t.Error("IsSecretName")
	}
}
