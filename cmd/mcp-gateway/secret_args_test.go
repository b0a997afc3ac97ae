package main

import (
	"strings"
	"testing"
)

// TestSecretArgs: `secret` takes set, get and rm with one name, and ls
// alone; a value on the command line, a bad name and a sub-command it
// does not have are usage errors that say what it takes.
func TestSecretArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"secret"}, "secret needs set, get, ls or rm"},
		{[]string{"secret", "st", "x"}, `unknown secret command "st"; did you mean "set"?`},
		{[]string{"secret", "set"}, "secret set needs the secret's name"},
		{[]string{"secret", "set", "gh.TOKEN", "ghp_value"}, "never from the command line"},
		{[]string{"secret", "get", "a", "b"}, "secret get takes one name"},
		{[]string{"secret", "rm", "a:b"}, `"a:b" is not a secret's name`},
		{[]string{"secret", "ls", "x"}, "secret ls takes no arguments"},
		{[]string{"secret", "ls", "--stdio"}, "--stdio cannot be combined with secret"},
	} {
		if _, err := parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args       []string
		verb, name string
	}{
		{[]string{"secret", "set", "github.GITHUB_TOKEN"}, "set", "github.GITHUB_TOKEN"},
		{[]string{"secret", "get", "a-b_c.1"}, "get", "a-b_c.1"},
		{[]string{"secret", "rm", "x"}, "rm", "x"},
		{[]string{"secret", "ls"}, "ls", ""},
	} {
		inv, err := parseArgs(tc.args)
		if err != nil || inv.command != "secret" || inv.secret != tc.verb || inv.name != tc.name {
			t.Errorf("%q: %+v, %v", tc.args, inv, err)
		}
	}
}
