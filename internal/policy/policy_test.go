package policy

import (
	"regexp"
	"strings"
	"testing"
)

func mustCompile(t *testing.T, rules ...Rule) *Policy {
	t.Helper()
	p, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecision(t *testing.T) {
	p := mustCompile(t,
		Rule{Name: "admins", When: `"admins" in groups`, Allow: []string{"*"}},
		Rule{Name: "team-a", When: `subject == "alice" || claims["team"] == "a"`, Allow: []string{"tb", "fs.read_*", "gateway.answer"}, Deny: []string{"tb.delete_*"}},
		Rule{Name: "readers", When: `"read" in scopes && client_id == "cli"`, Allow: []string{"fs.read_file"}},
		Rule{When: `claims.level > 3`, Allow: []string{"secret"}}, // an error for identities without level
	)
	alice := p.Decide(Identity{Auth: "oauth", Subject: "alice"})
	bob := p.Decide(Identity{Auth: "oauth", Subject: "bob", Claims: map[string]any{"team": "a"}})
	carol := p.Decide(Identity{Auth: "oauth", Subject: "carol", Scopes: []string{"read"}, ClientID: "cli"})
	root := p.Decide(Identity{Auth: "oauth", Subject: "root", Groups: []string{"admins"}, Claims: map[string]any{"level": 5.0}})
	nobody := p.Decide(Identity{Auth: "none"})
	for _, tc := range []struct {
		d      *Decision
		kind   Kind
		server string
		name   string
		want   bool
	}{
		{alice, Tool, "tb", "echo", true},
		{alice, Tool, "tb", "delete_all", false},
		{alice, Prompt, "tb", "greet", true},
		{alice, Resource, "tb", "", true},
		{alice, Tool, "fs", "read_file", true},
		{alice, Tool, "fs", "write_file", false},
		{alice, Resource, "fs", "", false}, // fs.read_* names tools and prompts, not resources
		{alice, Tool, "gateway", "answer", true},
		{alice, Tool, "gateway", "answer_detailed", false},
		{bob, Tool, "tb", "echo", true},
		{carol, Tool, "fs", "read_file", true},
		{carol, Tool, "tb", "echo", false},
		{root, Tool, "tb", "delete_all", true},
		{root, Resource, "secret", "", true},
		{nobody, Tool, "tb", "echo", false},
		{nil, Tool, "tb", "echo", true},
	} {
		if got := tc.d.Allows(tc.kind, tc.server, tc.name); got != tc.want {
			t.Errorf("%v Allows(%v, %s, %s) = %v, want %v", tc.d.Outcomes, tc.kind, tc.server, tc.name, got, tc.want)
		}
	}
	if o := alice.Outcomes[3]; o.Applies || o.Err == nil || o.Rule != "rule 4" {
		t.Errorf("a condition that fails to evaluate: %+v, want an error and not applying", o)
	}
	if e := alice.Explain(Tool, "tb", "delete_all"); e.Allowed || e.Rule != "team-a" || e.Pattern != "tb.delete_*" {
		t.Errorf("Explain(denied) = %+v", e)
	}
	if e := alice.Explain(Tool, "fs", "read_file"); !e.Allowed || e.Rule != "team-a" || e.Pattern != "fs.read_*" {
		t.Errorf("Explain(allowed) = %+v", e)
	}
	if e := nobody.Explain(Tool, "tb", "echo"); e.Allowed || e.Rule != "" {
		t.Errorf("Explain(no rule) = %+v", e)
	}
	if !alice.AllowsServer("fs") || alice.AllowsServer("secret") || !root.AllowsServer("anything") {
		t.Error("AllowsServer")
	}
	if !alice.Same(p.Decide(Identity{Subject: "alice"})) || alice.Same(bob) == false || alice.Same(carol) {
		t.Error("Same")
	}
	if var2, _ := Compile(nil); var2 != nil || var2.Decide(Identity{}) != nil {
		t.Error("no rules is no policy")
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		want string
	}{
		{Rule{When: `subject`, Allow: []string{"x"}}, "must be a boolean"},
		{Rule{When: ``, Allow: []string{"x"}}, "empty condition"},
		{Rule{When: `nosuchvar == 1`, Allow: []string{"x"}}, "undeclared reference"},
		{Rule{Name: "r", When: `true`, Allow: []string{"a b"}}, "r: allow: pattern"},
		{Rule{When: `true`, Deny: []string{"x."}}, "the name after the dot is empty"},
	} {
		_, err := Compile([]Rule{tc.rule})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want %q", tc.rule, err, tc.want)
		}
	}
}

func TestPattern(t *testing.T) {
	for _, tc := range []struct {
		pat, server, name string
		kind              Kind
		want              bool
	}{
		{"*", "any", "thing", Tool, true},
		{"gh", "gh", "x.y", Tool, true},
		{"gh", "ghx", "x", Tool, false},
		{"gh-*", "gh-enterprise", "x", Resource, true},
		{"gh.*", "gh", "x.y", Tool, true},
		{"gh.*", "gh", "", Resource, false},
		{"gh.create_*_issue", "gh", "create_big_issue", Tool, true},
		{"gh.create_*_issue", "gh", "create_issue", Tool, false},
		{"gh.x.y", "gh", "x.y", Prompt, true},
		{"*.read", "fs", "read", Tool, true},
	} {
		p, err := ParsePattern(tc.pat)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Matches(tc.kind, tc.server, tc.name); got != tc.want {
			t.Errorf("%q matches %v %s.%s = %v, want %v", tc.pat, tc.kind, tc.server, tc.name, got, tc.want)
		}
	}
}

// FuzzGlob checks glob against the regular expression it stands for.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"a*b*c", "abc"}, {"*", ""}, {"a*a", "a"}, {"*x*", "yxy"}, {"ab*b", "ab"}, {"**", "q"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		parts := strings.Split(pattern, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re, err := regexp.Compile(`^(?s:` + strings.Join(parts, ".*") + `)$`)
		if err != nil {
			t.Skip()
		}
		if got, want := glob(pattern, s), re.MatchString(s); got != want {
			t.Errorf("glob(%q, %q) = %v, want %v", pattern, s, got, want)
		}
	})
}
