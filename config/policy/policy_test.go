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
		Rule{Name: "team-a", When: `subject == "alice" || ("team" in claims && claims["team"] == "a")`, Allow: []string{"tb", "fs.read_*", "gateway.answer"}, Deny: []string{"tb.delete_*"}},
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

// A profile allows what its includes name (everything without one) and
// no exclude names; within a profile, a caller's decision allows only what
// both allow, and Explain names the profile that leaves a name out.
func TestProfileWithin(t *testing.T) {
	web, err := NewProfile("web", []string{"fetch", "gh.search_*", "gateway.answer"}, []string{"fetch.delete"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := NewProfile("all", nil, []string{"gh.delete_*"})
	if err != nil {
		t.Fatal(err)
	}
	p := mustCompile(t, Rule{Name: "team", When: `subject == "alice"`, Allow: []string{"fetch", "gh"}, Deny: []string{"gh.search_code"}})
	alice := p.Decide(Identity{Subject: "alice"})
	for _, tc := range []struct {
		d            *Decision
		kind         Kind
		server, name string
		want         bool
	}{
		{web, Tool, "fetch", "get", true},
		{web, Tool, "fetch", "delete", false},
		{web, Resource, "fetch", "", true},
		{web, Tool, "gh", "search_repos", true},
		{web, Prompt, "gh", "search_help", true},
		{web, Resource, "gh", "", false},
		{web, Tool, "gh", "create_issue", false},
		{web, Tool, "gateway", "answer", true},
		{web, Tool, "gateway", "answer_quick", false},
		{all, Tool, "anything", "at_all", true},
		{all, Tool, "gh", "delete_repo", false},
		{alice.Within(web), Tool, "gh", "search_repos", true},
		{alice.Within(web), Tool, "gh", "search_code", false},  // the policy denies it
		{alice.Within(web), Tool, "gh", "create_issue", false}, // the profile leaves it out
		{alice.Within(web), Tool, "gateway", "answer", false},  // the policy allows no answer tool
		{(*Decision)(nil).Within(web), Tool, "fetch", "get", true},
		{alice.Within(nil), Tool, "gh", "create_issue", true},
	} {
		if got := tc.d.Allows(tc.kind, tc.server, tc.name); got != tc.want {
			t.Errorf("Allows(%v, %s, %s) = %v, want %v", tc.kind, tc.server, tc.name, got, tc.want)
		}
		if e := tc.d.Explain(tc.kind, tc.server, tc.name); e.Allowed != tc.want {
			t.Errorf("Explain(%v, %s, %s) = %+v, want allowed %v", tc.kind, tc.server, tc.name, e, tc.want)
		}
	}
	if e := alice.Within(web).Explain(Tool, "gh", "create_issue"); e.Profile != "web" || e.Pattern != "" {
		t.Errorf("not included: %+v, want profile web and no pattern", e)
	}
	if e := web.Explain(Tool, "fetch", "delete"); e.Profile != "web" || e.Pattern != "fetch.delete" {
		t.Errorf("excluded: %+v, want profile web, pattern fetch.delete", e)
	}
	if e := alice.Within(web).Explain(Tool, "gh", "search_code"); e.Profile != "" || e.Rule != "team" {
		t.Errorf("denied by the policy: %+v, want rule team", e)
	}
	if !alice.Within(web).AllowsServer("gh") || alice.Within(web).AllowsServer("other") || web.AllowsServer("other") {
		t.Error("AllowsServer: want gh within web, not other")
	}
	if !alice.Within(web).Same(alice.Within(web)) || alice.Within(web).Same(alice.Within(all)) || alice.Same(alice.Within(web)) {
		t.Error("Same: the same rules within the same profile only")
	}
	if _, err := NewProfile("bad", []string{"a b"}, nil); err == nil || !strings.Contains(err.Error(), "profile bad: include") {
		t.Errorf("bad include: %v", err)
	}
}

// TestErroringDenyFailsClosed: a rule whose condition cannot be evaluated
// for a caller grants nothing, but its denies still deny: an error in a
// deny's condition must not open what it was written to close.
func TestErroringDenyFailsClosed(t *testing.T) {
	p := mustCompile(t,
		Rule{Name: "everyone", When: `true`, Allow: []string{"*"}},
		Rule{Name: "juniors", When: `claims.level < 3`, Allow: []string{"secret"}, Deny: []string{"tb.delete_*", "vault"}},
	)
	d := p.Decide(Identity{Auth: "oauth", Subject: "alice"}) // no level claim: juniors errs
	if o := d.Outcomes[1]; o.Applies || o.Err == nil {
		t.Fatalf("juniors: %+v, want an error", o)
	}
	for _, tc := range []struct {
		kind         Kind
		server, name string
		want         bool
	}{
		{Tool, "tb", "echo", true},
		{Tool, "tb", "delete_all", false},
		{Tool, "vault", "read", false},
		{Resource, "vault", "", false},
		{Tool, "secret", "x", true}, // allowed by everyone; juniors' allow grants nothing here
	} {
		if got := d.Allows(tc.kind, tc.server, tc.name); got != tc.want {
			t.Errorf("Allows(%v, %s, %s) = %v, want %v", tc.kind, tc.server, tc.name, got, tc.want)
		}
	}
	if d.AllowsServer("vault") || !d.AllowsServer("tb") {
		t.Error("AllowsServer: an erroring rule's whole-server deny must hide the server")
	}
	if e := d.Explain(Tool, "tb", "delete_all"); e.Allowed || e.Rule != "juniors" || e.Pattern != "tb.delete_*" || !e.Erred {
		t.Errorf("Explain = %+v, want denied by juniors' erroring deny", e)
	}
	// An erroring rule's allow grants nothing.
	only := mustCompile(t, Rule{Name: "lv", When: `claims.level > 3`, Allow: []string{"*"}})
	if only.Decide(Identity{}).Allows(Tool, "tb", "echo") {
		t.Error("an erroring rule's allow granted access")
	}
	// Which rules erred is part of what a decision is.
	withLevel := p.Decide(Identity{Subject: "alice", Claims: map[string]any{"level": 5.0}})
	if d.Same(withLevel) {
		t.Error("Same: a decision with an erroring deny is not the one without it")
	}
}
