package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// A scenario is what the client does once connected: the steps of go-sdk's
// conformance everything-client for the same scenario, made through a
// backends.Manager (m) holding the scenario's server as the one backend.
// Its error fails the run; steps the suite expects to be refused are
// logged instead.
type scenario func(ctx context.Context, s *session) error

// session is the connected client a scenario drives.
type session struct {
	m   *backends.Manager
	log *slog.Logger
	sc  suiteContext
}

// suiteContext is MCP_CONFORMANCE_CONTEXT: what some scenarios hand the
// client (pre-registered OAuth credentials, the tool calls to make).
type suiteContext struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	ToolCalls    []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
}

// scenarioFor returns the steps of a scenario the suite names, or nil for
// one this client does not play.
func scenarioFor(name string) scenario {
	switch {
	case strings.HasPrefix(name, "auth/"):
		return call("test-tool", `{}`)
	}
	return map[string]scenario{
		// Connecting is the scenario: the handshake (server/discover, else
		// initialize) and the lists a backend is asked for when it starts
		// (tools/list: a $ref in a schema is kept, never fetched).
		"initialize":               connectOnly,
		"request-metadata":         connectOnly,
		"json-schema-ref-no-deref": connectOnly,

		"tools_call":                          call("add_numbers", `{"a":5,"b":3}`),
		"sse-retry":                           call("test_reconnection", `{}`),
		"elicitation-sep1034-client-defaults": call("test_client_elicitation_defaults", `{}`),
		"json-schema-2020-12-preservation":    echoSchema,
		"sep-2322-client-request-state":       inputRounds,
		"http-standard-headers":               everyKind,
		"http-custom-headers":                 contextCalls,
		"http-invalid-tool-headers":           everyTool,
	}[name]
}

func connectOnly(context.Context, *session) error { return nil }

// call calls one tool with args.
func call(tool, args string) scenario {
	return func(ctx context.Context, s *session) error {
		res, err := s.callTool(ctx, tool, json.RawMessage(args))
		if err != nil {
			return fmt.Errorf("call %s: %w", tool, err)
		}
		fmt.Printf("%s: %s\n", tool, res)
		return nil
	}
}

// callTool calls a tool of the server, answering the input it asks for
// (backends.Fulfill, with the answers of answer) until its result is final.
func (s *session) callTool(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	res, err := s.m.CallTool(ctx, server, tool, args, backends.CallOptions{})
	if err != nil {
		return nil, err
	}
	return backends.Fulfill(ctx, res, s.ask, func(ctx context.Context, extra json.RawMessage) (json.RawMessage, error) {
		return s.m.CallTool(ctx, server, tool, args, backends.CallOptions{Extra: extra})
	})
}

// ask answers an input request of the server as answer does.
func (s *session) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return answer(ctx, server, method, params)
}

// answer answers a server's request to the client — of the handshake era
// (backends.Hooks.Request) or an input request of the per-request era —
// as the everything-client does: it accepts every elicitation, with the
// default of each field that has one (as go-sdk's client fills them in)
// and yes to a yes-or-no field without one (the scenarios ask for a
// confirmation); it has no roots, and cannot sample (run declares roots
// and elicitation only).
func answer(_ context.Context, _, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "elicitation/create":
		content := json.RawMessage(`{}`)
		_ = wire.EachMember(wire.Member(wire.Member(params, "requestedSchema"), "properties"), func(name string, prop json.RawMessage) {
			v := wire.Member(prop, "default")
			if typ, _ := wire.Unquote(wire.Member(prop, "type")); v == nil && typ == "boolean" {
				v = json.RawMessage(`true`)
			}
			if v != nil {
				content, _ = wire.SetMember(content, name, v)
			}
		})
		return wire.SetMember(json.RawMessage(`{"action":"accept"}`), "content", content)
	case "roots/list":
		return json.RawMessage(`{"roots":[]}`), nil
	}
	return nil, &backends.RPCError{Server: server, Code: -32601, Message: "this client does not answer " + method}
}

// echoSchema hands the input schema of json_schema_2020_12_tool, as it was
// listed, back to the server through its json_schema_echo tool: every
// keyword must have survived.
func echoSchema(ctx context.Context, s *session) error {
	const focal, echo = "json_schema_2020_12_tool", "json_schema_echo"
	for _, t := range s.m.Tools() {
		if t.Name != focal {
			continue
		}
		args, err := wire.SetMember(json.RawMessage(`{}`), "schema", wire.Member(t.Raw, "inputSchema"))
		if err != nil {
			return err
		}
		return call(echo, string(args))(ctx, s)
	}
	return fmt.Errorf("tool %q not listed", focal)
}

// inputRounds calls the tools that answer input_required (with and
// without a requestState, and without a resultType) and one between them
// that must get nothing of the others' rounds. The suite judges the
// retries; a call it refuses is no failure of the client.
func inputRounds(ctx context.Context, s *session) error {
	for _, tool := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		if _, err := s.callTool(ctx, tool, json.RawMessage(`{}`)); err != nil {
			s.log.Info("call refused", "tool", tool, "err", err)
		}
	}
	return nil
}

// everyKind calls the first tool, reads the first resource and gets the
// first prompt, so that the suite sees the standard headers of each.
func everyKind(ctx context.Context, s *session) error {
	if tools := s.m.Tools(); len(tools) > 0 {
		if _, err := s.callTool(ctx, tools[0].Name, json.RawMessage(`{}`)); err != nil {
			s.log.Info("call refused", "tool", tools[0].Name, "err", err)
		}
	}
	for _, r := range s.m.Resources() {
		if !r.Template {
			p, _ := json.Marshal(map[string]string{"uri": r.URI})
			if _, err := s.m.Request(ctx, server, "resources/read", json.RawMessage(p), backends.CallOptions{}); err != nil {
				s.log.Info("read refused", "uri", r.URI, "err", err)
			}
			break
		}
	}
	if prompts := s.m.Prompts(); len(prompts) > 0 {
		p, _ := json.Marshal(map[string]any{"name": prompts[0].Name, "arguments": map[string]string{}})
		if _, err := s.m.Request(ctx, server, "prompts/get", json.RawMessage(p), backends.CallOptions{}); err != nil {
			s.log.Info("prompt refused", "prompt", prompts[0].Name, "err", err)
		}
	}
	return nil
}

// contextCalls makes the tool calls MCP_CONFORMANCE_CONTEXT lists, so that
// the suite sees the Mcp-Param headers of their arguments.
func contextCalls(ctx context.Context, s *session) error {
	for _, c := range s.sc.ToolCalls {
		args := c.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		if _, err := s.callTool(ctx, c.Name, args); err != nil {
			s.log.Info("call refused", "tool", c.Name, "err", err)
		}
	}
	return nil
}

// everyTool calls each tool listed: those whose x-mcp-header marks are
// invalid must not be among them.
func everyTool(ctx context.Context, s *session) error {
	for _, t := range s.m.Tools() {
		if _, err := s.callTool(ctx, t.Name, json.RawMessage(`{"region":"us-west1"}`)); err != nil {
			s.log.Info("call refused", "tool", t.Name, "err", err)
		}
	}
	return nil
}
