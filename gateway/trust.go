package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// The trust layer's hooks in the gateway (docs/trust.md). What a backend
// lists is decided in package backends, so a withheld definition is in no
// table here: these only make the answer to a name nothing routes to say
// why, when the name is that of a withheld definition.

// unknown is the error of a call by a name nothing routes to: the
// backend's WithheldError when the name, in either naming form, is that of
// a withheld tool (or prompt, kind) of a configured server, else "not
// found". A name the per-identity policy hides is "not found" whatever it
// is (the refusal is reported, access.go): the client learns nothing of
// what it may not see, not even that it is withheld.
func (f *front) unknown(kind, name string) error {
	pk := policyKind(kind)
	if f.hidden(pk, name) || kind == kindResource {
		return f.notFound(kind, name)
	}
	kindOf := map[string]string{kindTool: "tool", kindPrompt: "prompt"}[kind]
	var err error
	f.owners(name, func(server, own string) bool {
		if !f.allows(pk, server, own) {
			return false
		}
		err = f.g.opts.Backends.Trust().Withheld(server, kindOf, own)
		return err != nil
	})
	if err != nil {
		return err
	}
	return f.notFound(kind, name)
}

// owners calls fn with each configured server and own name that name may
// stand for, in either naming form, until fn returns true.
func (f *front) owners(name string, fn func(server, own string) bool) {
	for server, prefix := range f.g.prefixes() {
		for _, strict := range []bool{false, true} {
			own, ok := name, prefix == ""
			if !ok {
				own, ok = strings.CutPrefix(name, f.g.namer(strict).name(prefix, ""))
				ok = ok && own != ""
			}
			if ok && fn(server, own) {
				return
			}
		}
	}
}

// refusedError is a call the trust layer refused: a destructive tool's
// call that the user declined, or could not be asked to confirm.
type refusedError struct {
	server, tool string // the backend and its own tool name
	reason       string // "declined", "unconfirmed"
	msg          string
}

func (e *refusedError) Error() string { return e.msg }

// Confirmation of destructive calls (gateway.confirm: destructive): a call
// of a backend tool whose annotations say destructiveHint: true is put to
// the user through the client's elicitation first, and refused when the
// client cannot ask (it declared no elicitation; a REST call) or the user
// does not accept. Only an explicit destructiveHint counts: by MCP's
// defaults every tool without annotations "may" destroy, and asking for
// each of those would teach users to click yes.

// needsConfirm reports whether a call of route r must be confirmed.
func (f *front) needsConfirm(r toolRoute) bool {
	if f.g.opts.Config.Gateway.Confirm != "destructive" || r.kind != backendTool || r.tool == nil || r.tool.Annotations == nil {
		return false
	}
	d := r.tool.Annotations.DestructiveHint
	return d != nil && *d
}

type confirmedKey struct{}

// WithConfirmed returns ctx for a Gateway.Call the user made themselves
// (mcp-gateway call): it needs no confirmation.
func WithConfirmed(ctx context.Context) context.Context {
	return context.WithValue(ctx, confirmedKey{}, true)
}

// confirm asks the user whether to run the call tc of r, through the
// client's elicitation, and returns nil when they accept.
func (f *front) confirm(ctx context.Context, name string, r toolRoute, tc toolCall) error {
	if ok, _ := ctx.Value(confirmedKey{}).(bool); ok {
		return nil
	}
	refuse := func(reason, msg string) error {
		return &refusedError{server: r.server, tool: r.own, reason: reason, msg: msg}
	}
	f.g.mu.Lock()
	s := f.sess
	f.g.mu.Unlock()
	var c *call
	if s != nil {
		c = s.callByID(tc.id)
	}
	if held := callerOf(ctx).held; c == nil && held != nil {
		// A run of run_script that is held for an earlier confirmation
		// (its request was answered input_required) asks again through
		// its hold, whose client's retry stands for it now.
		if hs, hc := held(); hc != nil {
			s, c = hs, hc
		}
	}
	// A client of 2026-07-28 is asked by an input_required answer to its
	// call (hold.go), one of the handshake era by a request.
	perRequest := c != nil && c.era == wire.PerRequestEra
	if c == nil || perRequest && !declares(c.caps, "elicitation/create") || !perRequest && !f.supports("elicitation/create") {
		return refuse("unconfirmed", fmt.Sprintf("%s is marked destructive and gateway.confirm is destructive, but this client cannot ask you to confirm it (it does not support elicitation); call it from a client that does, or with `mcp-gateway call`", name))
	}
	args, _ := safetext.MaskShapes(bytes.TrimSpace(tc.args))
	shown := string(args)
	shown = wire.Truncate(shown, 600, "…")
	if shown == "" {
		shown = "{}"
	}
	params := mustJSON(map[string]any{
		"message": fmt.Sprintf("%s (tool %s of MCP server %s) is marked destructive. Run it with these arguments?\n%s", name, r.own, r.server, shown),
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{"type": "boolean", "title": "Run " + r.own, "default": false},
			},
			"required": []string{"confirm"},
		},
	})
	var raw json.RawMessage
	var err error
	if perRequest {
		raw, err = s.ask(ctx, c, r.server, "elicitation/create", params)
	} else {
		raw, err = s.request(ctx, tc.id, "elicitation/create", params)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return refuse("unconfirmed", fmt.Sprintf("%s is marked destructive and could not be confirmed: %v", name, err))
	}
	var answer struct {
		Action  string `json:"action"`
		Content struct {
			Confirm *bool `json:"confirm"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &answer)
	if answer.Action != "accept" || answer.Content.Confirm != nil && !*answer.Content.Confirm {
		f.log.Info("destructive call declined", "tool", name, "server", r.server, "action", answer.Action)
		return refuse("declined", fmt.Sprintf("%s was not run: the user declined it", name))
	}
	return nil
}
