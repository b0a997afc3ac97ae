// Package policy is the HTTP front's per-identity policy (docs/teams.md):
// rules whose condition is a CEL expression over the caller's identity, and
// whose allow and deny patterns name servers, tools and prompts. A policy is
// compiled once; for each request the conditions are evaluated once
// (Decide), and the Decision then answers for every name by matching
// patterns, which costs no evaluation.
package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// Identity is what a rule's condition sees of a caller.
type Identity struct {
	Auth     string   // how the caller authenticated: "oauth", "token" or "none"
	Subject  string   // the token's sub ("" for none)
	Issuer   string   // the token's iss
	ClientID string   // the OAuth client the token was issued to (client_id, else azp)
	Scopes   []string // the token's scopes
	Groups   []string // the token's groups claim
	// Claims are all the token's claims, as JSON decodes them.
	Claims map[string]any
}

// Rule is one rule as configured (config.PolicyRule).
type Rule struct {
	Name  string
	When  string
	Allow []string
	Deny  []string
}

// Policy is a compiled set of rules. A nil *Policy allows everything.
type Policy struct {
	rules []*rule
}

type rule struct {
	name  string // the rule's name, else "rule N" (1-based)
	when  string
	prg   cel.Program
	allow []Pattern
	deny  []Pattern
}

// costLimit bounds one condition's evaluation: a rule cannot make a request
// spend more than a few microseconds of the gateway's time.
const costLimit = 10_000

// env is the CEL environment conditions are compiled in.
func env() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("auth", cel.StringType),
		cel.Variable("subject", cel.StringType),
		cel.Variable("issuer", cel.StringType),
		cel.Variable("client_id", cel.StringType),
		cel.Variable("scopes", cel.ListType(cel.StringType)),
		cel.Variable("groups", cel.ListType(cel.StringType)),
		cel.Variable("claims", cel.MapType(cel.StringType, cel.DynType)),
	)
}

// CheckExpr reports what is wrong with a condition, or nil: it must compile
// and be a boolean.
func CheckExpr(when string) error {
	e, err := env()
	if err != nil {
		return err
	}
	_, err = compile(e, when)
	return err
}

func compile(e *cel.Env, when string) (cel.Program, error) {
	if strings.TrimSpace(when) == "" {
		return nil, errors.New("empty condition (write true for a rule that applies to everyone)")
	}
	ast, iss := e.Compile(when)
	if iss != nil && iss.Err() != nil {
		// The first error, placed in the expression; CEL's own text draws
		// the expression over several lines.
		first := iss.Errors()[0]
		return nil, fmt.Errorf("%s (at column %d of %q)", first.Message, first.Location.Column()+1, when)
	}
	if !ast.OutputType().IsExactType(types.BoolType) {
		return nil, fmt.Errorf("must be a boolean, not %s", ast.OutputType())
	}
	return e.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(costLimit))
}

// Compile compiles rules; an empty list is a nil Policy (everything
// allowed).
func Compile(rules []Rule) (*Policy, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	p := &Policy{}
	for i, r := range rules {
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("rule %d", i+1)
		}
		prg, err := compile(e, r.When)
		if err != nil {
			return nil, fmt.Errorf("%s: when: %w", name, err)
		}
		cr := &rule{name: name, when: r.When, prg: prg}
		for _, s := range r.Allow {
			pat, err := ParsePattern(s)
			if err != nil {
				return nil, fmt.Errorf("%s: allow: %w", name, err)
			}
			cr.allow = append(cr.allow, pat)
		}
		for _, s := range r.Deny {
			pat, err := ParsePattern(s)
			if err != nil {
				return nil, fmt.Errorf("%s: deny: %w", name, err)
			}
			cr.deny = append(cr.deny, pat)
		}
		p.rules = append(p.rules, cr)
	}
	return p, nil
}

// Decision is what the policy decided for one identity: the rules that
// apply to it. A nil *Decision allows everything (no policy).
type Decision struct {
	applies []*rule
	// erred are the rules whose condition could not be evaluated: their
	// allows do not count, but their denies do, so that an error fails
	// closed (a deny that errors still denies).
	erred []*rule
	// within is a profile the decision is bounded by (Within): what it
	// allows must be allowed there too.
	within *Decision
	// profile names the profile this decision is (NewProfile), "" for a
	// policy's.
	profile string
	// Outcomes says, for each rule in order, whether it applies, or why
	// its condition could not be evaluated (then only its denies count).
	Outcomes []Outcome
}

// Outcome is one rule's condition evaluated for an identity.
type Outcome struct {
	Rule    string
	When    string
	Applies bool
	Err     error
}

// vars are what a condition sees of id.
func vars(id Identity) map[string]any {
	v := map[string]any{
		"auth":      id.Auth,
		"subject":   id.Subject,
		"issuer":    id.Issuer,
		"client_id": id.ClientID,
		"scopes":    nonNil(id.Scopes),
		"groups":    nonNil(id.Groups),
		"claims":    id.Claims,
	}
	if id.Claims == nil {
		v["claims"] = map[string]any{}
	}
	return v
}

// Condition is one compiled condition on its own (gateway.policy.admin).
// A nil *Condition holds for nobody.
type Condition struct{ prg cel.Program }

// CompileCondition compiles when; "" is a nil Condition.
func CompileCondition(when string) (*Condition, error) {
	if strings.TrimSpace(when) == "" {
		return nil, nil
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	prg, err := compile(e, when)
	if err != nil {
		return nil, err
	}
	return &Condition{prg}, nil
}

// Holds reports whether the condition is true for id; one that cannot be
// evaluated is false.
func (c *Condition) Holds(id Identity) bool {
	if c == nil {
		return false
	}
	out, _, err := c.prg.Eval(vars(id))
	return err == nil && out == types.True
}

// Decide evaluates every rule's condition for id, once.
func (p *Policy) Decide(id Identity) *Decision {
	if p == nil {
		return nil
	}
	vars := vars(id)
	d := &Decision{Outcomes: make([]Outcome, 0, len(p.rules))}
	for _, r := range p.rules {
		o := Outcome{Rule: r.name, When: r.when}
		out, _, err := r.prg.Eval(vars)
		switch {
		case err != nil:
			o.Err = err
			if len(r.deny) > 0 {
				d.erred = append(d.erred, r)
			}
		case out == types.True:
			o.Applies = true
			d.applies = append(d.applies, r)
		}
		d.Outcomes = append(d.Outcomes, o)
	}
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Kinds of what a pattern may name.
type Kind int

const (
	Tool Kind = iota
	Prompt
	Resource
)

// Allows reports whether the identity may see and use what server serves
// under name (its own name for a tool or prompt; a resource is allowed by
// its server only, name is ignored).
func (d *Decision) Allows(kind Kind, server, name string) bool {
	if d == nil {
		return true
	}
	if d.within != nil && !d.within.Allows(kind, server, name) {
		return false
	}
	if r, _ := d.erredDeny(kind, server, name); r != nil {
		return false
	}
	allowed := false
	for _, r := range d.applies {
		for _, p := range r.deny {
			if p.matches(kind, server, name) {
				return false
			}
		}
		if !allowed {
			for _, p := range r.allow {
				if p.matches(kind, server, name) {
					allowed = true
					break
				}
			}
		}
	}
	return allowed
}

// AllowsServer reports whether the identity may see anything of server at
// all: some applicable rule's allow names it, or a pattern over every
// server, and no deny names the whole server.
func (d *Decision) AllowsServer(server string) bool {
	if d == nil {
		return true
	}
	if d.within != nil && !d.within.AllowsServer(server) {
		return false
	}
	for _, r := range d.erred {
		for _, p := range r.deny {
			if p.name == "" && glob(p.server, server) {
				return false
			}
		}
	}
	allowed := false
	for _, r := range d.applies {
		for _, p := range r.deny {
			if p.name == "" && glob(p.server, server) {
				return false
			}
		}
		for _, p := range r.allow {
			if glob(p.server, server) {
				allowed = true
			}
		}
	}
	return allowed
}

// Explanation says why a Decision allows or denies a name.
type Explanation struct {
	Allowed bool
	// Rule and Pattern are the deny that refused it, or the first allow
	// that admitted it; "" when no rule's pattern matched.
	Rule    string
	Pattern string
	// Profile names the profile (NewProfile) that leaves it out: Pattern
	// is then its exclude that names it, or "" when no include does.
	Profile string
	// Erred is set when the deny that refused it is of a rule whose
	// condition could not be evaluated for the caller.
	Erred bool
}

// erredDeny is the first deny pattern, and its rule, of a rule whose
// condition erred that names kind, server and name; nil when none does.
func (d *Decision) erredDeny(kind Kind, server, name string) (*rule, *Pattern) {
	for _, r := range d.erred {
		for i := range r.deny {
			if r.deny[i].matches(kind, server, name) {
				return r, &r.deny[i]
			}
		}
	}
	return nil, nil
}

// Explain is Allows with its reason.
func (d *Decision) Explain(kind Kind, server, name string) Explanation {
	if d == nil {
		return Explanation{Allowed: true}
	}
	e := d.explain(kind, server, name)
	if e.Allowed && d.within != nil {
		if w := d.within.Explain(kind, server, name); !w.Allowed {
			return w
		}
	}
	return e
}

// explain is Explain of d's own rules.
func (d *Decision) explain(kind Kind, server, name string) Explanation {
	if d.profile != "" {
		// A profile's one rule: its excludes, else its includes.
		r := d.applies[0]
		for _, p := range r.deny {
			if p.matches(kind, server, name) {
				return Explanation{Profile: d.profile, Pattern: p.text}
			}
		}
		for _, p := range r.allow {
			if p.matches(kind, server, name) {
				return Explanation{Allowed: true}
			}
		}
		return Explanation{Profile: d.profile}
	}
	if r, p := d.erredDeny(kind, server, name); r != nil {
		return Explanation{Rule: r.name, Pattern: p.text, Erred: true}
	}
	var first *Explanation
	for _, r := range d.applies {
		for _, p := range r.deny {
			if p.matches(kind, server, name) {
				return Explanation{Rule: r.name, Pattern: p.text}
			}
		}
		if first != nil {
			continue
		}
		for _, p := range r.allow {
			if p.matches(kind, server, name) {
				first = &Explanation{Allowed: true, Rule: r.name, Pattern: p.text}
				break
			}
		}
	}
	if first != nil {
		return *first
	}
	return Explanation{}
}

// Same reports whether two decisions apply the same rules (a session whose
// client's token changed keeps its tables when they do).
func (d *Decision) Same(o *Decision) bool {
	if d == nil || o == nil {
		return d == o
	}
	return slices.Equal(d.applies, o.applies) && slices.Equal(d.erred, o.erred) && d.within == o.within
}

// NewProfile is a profile (gateway.profiles): a named set of servers,
// tools and prompts that every caller of a front sees at most, as a
// decision that applies to everyone. include and exclude are patterns
// (ParsePattern); no include means every server, and an exclude wins.
func NewProfile(name string, include, exclude []string) (*Decision, error) {
	if len(include) == 0 {
		include = []string{"*"}
	}
	r := &rule{name: "profile " + name}
	for _, s := range include {
		pat, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("profile %s: include: %w", name, err)
		}
		r.allow = append(r.allow, pat)
	}
	for _, s := range exclude {
		pat, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("profile %s: exclude: %w", name, err)
		}
		r.deny = append(r.deny, pat)
	}
	return &Decision{applies: []*rule{r}, profile: name}, nil
}

// Within returns a decision that allows what both d and the profile p
// allow: a caller's decision on a front that serves a profile. A nil d
// (no policy) is p itself, and a nil p leaves d as it is.
func (d *Decision) Within(p *Decision) *Decision {
	switch {
	case p == nil:
		return d
	case d == nil:
		return p
	}
	out := *d
	out.within = d.within.Within(p)
	return &out
}
