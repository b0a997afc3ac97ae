package main

import (
	"fmt"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
)

// compilePolicy compiles gateway.policy (already checked by config.Load).
func compilePolicy(cfg *config.Config) (*policy.Policy, error) {
	rules := make([]policy.Rule, 0, len(cfg.Gateway.Policy.Rules))
	for _, r := range cfg.Gateway.Policy.Rules {
		rules = append(rules, policy.Rule{Name: r.Name, When: r.When, Allow: r.Allow, Deny: r.Deny})
	}
	p, err := policy.Compile(rules)
	if err != nil {
		return nil, usagef("gateway.policy.rules: %v", err)
	}
	return p, nil
}

// policyCheck is `mcp-gateway policy check --subject S TOOL`: what the
// policy decides for that caller and that tool, and why. It starts no
// backend: the tool is named by the configured prefixes (either naming
// form) or as SERVER.TOOL. Exit 0 when the tool is allowed, 1 when not.
func (a *app) policyCheck() error {
	w := a.inv.who
	id := policy.Identity{Auth: w.auth, Subject: w.subject, Issuer: w.issuer, ClientID: w.clientID,
		Scopes: w.scopes, Groups: w.groups, Claims: map[string]any{}}
	for _, c := range w.claims {
		k, v, ok := strings.Cut(c, "=")
		if !ok || k == "" {
			return usagef("--claim takes NAME=VALUE, not %q", c)
		}
		id.Claims[k] = v
	}
	for k, v := range map[string]any{"sub": id.Subject, "iss": id.Issuer, "client_id": id.ClientID} {
		if _, set := id.Claims[k]; !set && v != "" {
			id.Claims[k] = v
		}
	}
	server, own, err := policyName(a.cfg, a.inv.callName)
	if err != nil {
		return err
	}
	out := a.env.stdout
	who := fmt.Sprintf("subject %q (auth %s)", id.Subject, id.Auth)
	if a.policy == nil {
		fmt.Fprintf(out, "%s: %s (server %s, tool %s) is allowed: gateway.policy has no rules, so every caller sees everything\n", who, a.inv.callName, server, own)
		return nil
	}
	d := a.policy.Decide(id)
	e := d.Explain(policy.Tool, server, own)
	verdict := "denied"
	if e.Allowed {
		verdict = "allowed"
	}
	fmt.Fprintf(out, "%s: %s (server %s, tool %s) is %s\n", who, a.inv.callName, server, own, verdict)
	switch {
	case e.Rule != "" && e.Allowed:
		fmt.Fprintf(out, "  allowed by rule %q (allow %s)\n", e.Rule, e.Pattern)
	case e.Erred:
		fmt.Fprintf(out, "  denied by rule %q (deny %s), whose condition could not be evaluated for this caller: a deny whose condition errors denies (fails closed)\n", e.Rule, e.Pattern)
	case e.Rule != "":
		fmt.Fprintf(out, "  denied by rule %q (deny %s)\n", e.Rule, e.Pattern)
	default:
		fmt.Fprintf(out, "  no rule that applies allows it: a caller sees only what a rule that applies to it allows\n")
	}
	fmt.Fprintln(out, "rules:")
	for _, o := range d.Outcomes {
		state := "does not apply"
		switch {
		case o.Err != nil:
			state = "error: " + o.Err.Error() + " (its allows grant nothing, its denies still deny)"
		case o.Applies:
			state = "applies"
		}
		fmt.Fprintf(out, "  %-16s %s  when: %s\n", o.Rule, state, o.When)
	}
	if !e.Allowed {
		return errReported
	}
	return nil
}

// policyName finds the server and own name a tool name stands for, offline:
// an answer tool; a name that starts with a server's prefix and the
// separator (or __, the strict form); SERVER.TOOL; or the one server
// without a prefix.
func policyName(cfg *config.Config, name string) (server, own string, err error) {
	if cfg.Gateway.AnswerTools && answer.IsTool(name) {
		return policy.Gateway, name, nil
	}
	var unprefixed []string
	for _, s := range cfg.Servers {
		if s.Prefix == "" {
			unprefixed = append(unprefixed, s.Name)
			continue
		}
		for _, sep := range []string{cfg.Gateway.Separator, "__"} {
			if rest, ok := strings.CutPrefix(name, s.Prefix+sep); ok && rest != "" {
				return s.Name, rest, nil
			}
		}
	}
	if srv, rest, ok := strings.Cut(name, "."); ok && rest != "" {
		for _, s := range cfg.Servers {
			if s.Name == srv {
				return s.Name, rest, nil
			}
		}
	}
	if len(unprefixed) == 1 {
		return unprefixed[0], name, nil
	}
	return "", "", usagef("no configured server's prefix matches %q: name the tool as a client does (server.tool, server__tool) or as SERVER.TOOL", name)
}
