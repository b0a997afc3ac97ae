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
		// policy check's identity flags are flags like the others.
		{[]string{"policy", "check", "--subjet", "alice", "t"}, `unknown flag --subjet; did you mean --subject?`},
		{[]string{"policy", "check", "--grup", "eng", "t"}, `unknown flag --grup; did you mean --group?`},
		{[]string{"policy", "check", "--client-di", "c", "t"}, `unknown flag --client-di; did you mean --client-id?`},
		{[]string{"tools", "--subject", "alice"}, "--subject, --issuer, --client-id, --group, --scope, --claim and --auth belong to policy check"},
		{[]string{"logout", "x", "--subject", "alice", "--group", "eng"}, "logout takes --subject S alone"},
		{[]string{"login", "x", "--subject", "alice"}, "belong to policy check"},
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
	inv, err := parseArgs([]string{"policy", "check", "--subject", "alice", "--group", "eng", "--group", "ops", "--scope", "read",
		"--claim", "tier=gold", "--client-id", "cli", "--issuer", "https://idp", "--auth", "token", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if w := inv.who; !w.given || w.subject != "alice" || strings.Join(w.groups, ",") != "eng,ops" || strings.Join(w.scopes, ",") != "read" ||
		strings.Join(w.claims, ",") != "tier=gold" || w.clientID != "cli" || w.issuer != "https://idp" || w.auth != "token" || inv.callName != "t" {
		t.Errorf("policy check: %+v", inv.who)
	}
	if inv, err := parseArgs([]string{"logout", "linear", "--subject", "u-1@https://idp/"}); err != nil || inv.subject != "u-1@https://idp/" || inv.server != "linear" || inv.who.given {
		t.Errorf("logout --subject: %+v %v", inv, err)
	}
	for _, ok := range [][]string{{"call", "x"}, {"call", "x", `{"a":[1]}`}, {"call", "x", " {} "}} {
		if _, err := parseArgs(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
