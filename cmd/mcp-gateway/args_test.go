package main

import (
	"strings"
	"testing"
)

// Bad command lines get messages in the user's terms: what JSON_ARGS was
// instead of an object (no Go types), and the command or flag meant.
func TestArgsMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "x", "[1,2]"}, "must be a JSON object of the tool's arguments, such as '{\"path\":\"/tmp\"}', not an array"},
		{[]string{"call", "x", `"s"`}, "not a string"},
		{[]string{"call", "x", "3"}, "not a number"},
		{[]string{"call", "x", "null"}, "not null"},
		{[]string{"call", "x", "{bad"}, "JSON_ARGS is not valid JSON"},
		{[]string{"toolz"}, `unknown command "toolz"; did you mean "tools"?`},
		{[]string{"imprt", "--from", "x"}, `did you mean "import"?`},
		{[]string{"stauts"}, `did you mean "status"?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"tools", "--confg", "x"}, `unknown flag --confg; did you mean --config?`},
		{[]string{"--stido"}, `did you mean --stdio?`},
	} {
		_, err := parseArgs(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go value") || strings.Contains(err.Error(), "map[")) {
			t.Errorf("%q: Go types in %v", tc.args, err)
		}
	}
	if _, err := parseArgs([]string{"frobnicate"}); err != nil && strings.Contains(err.Error(), "did you mean") {
		t.Errorf("a suggestion for a word like no command: %v", err)
	}
	for _, ok := range [][]string{{"call", "x"}, {"call", "x", `{"a":[1]}`}, {"call", "x", " {} "}} {
		if _, err := parseArgs(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
