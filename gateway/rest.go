package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/propagation"
)

// The REST API (docs/http.md): GET /mcp/tools and POST /mcp/call, for
// callers that want plain JSON over HTTP rather than MCP. A call takes the
// same path as `mcp-gateway call` (Gateway.Call), and its JSON-RPC error is
// mapped to an HTTP status here, in one place (restError).

// restTool is one tool as GET /mcp/tools lists it.
type restTool struct {
	Name         string `json:"name"`
	Server       string `json:"server"`
	Description  string `json:"description,omitempty"`
	InputSchema  any    `json:"inputSchema"`
	OutputSchema any    `json:"outputSchema,omitempty"`
	Timeout      int64  `json:"timeout"` // milliseconds
}

// serveTools serves GET /mcp/tools.
func (g *Gateway) serveTools(w http.ResponseWriter, r *http.Request) {
	if !onlyMethod(w, r, http.MethodGet) || !g.admitREST(w, r) {
		return
	}
	timeouts := make(map[string]int64)
	for _, s := range *g.servers.Load() {
		timeouts[s.Name] = config.CallTimeout(s, g.opts.Config.DefaultTimeout()).Milliseconds()
	}
	tools := []restTool{}
	g.waitFirstStarts(r.Context(), upstreamCaller(PrincipalOf(r.Context())))
	for _, t := range g.ToolsFor(r.Context()) {
		to, ok := timeouts[t.Server]
		if !ok {
			to = int64(g.opts.Config.Gateway.DefaultTimeoutMS)
		}
		tools = append(tools, restTool{
			Name:         t.Name,
			Server:       t.Server,
			Description:  t.Description,
			InputSchema:  t.Tool.InputSchema,
			OutputSchema: t.Tool.OutputSchema,
			Timeout:      to,
		})
	}
	writeJSONStatus(w, http.StatusOK, map[string]any{"tools": tools})
}

// restCall is POST /mcp/call's body, in either form.
type restCall struct {
	Server    string          `json:"server"`
	ToolName  string          `json:"toolName"`
	Input     json.RawMessage `json:"input"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// serveCall serves POST /mcp/call.
func (g *Gateway) serveCall(w http.ResponseWriter, r *http.Request) {
	if !onlyMethod(w, r, http.MethodPost) || !g.admitREST(w, r) {
		return
	}
	if !isJSONContent(r) {
		restFail(w, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be 'application/json'", nil)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			bodyError(w, err)
			return
		}
		restFail(w, http.StatusBadRequest, "VALIDATION_ERROR", "read body: "+err.Error(), nil)
		return
	}
	body, err := decodeRESTCall(raw)
	if err != nil {
		restFail(w, http.StatusBadRequest, "VALIDATION_ERROR", "request body must be one JSON object: "+err.Error(), nil)
		return
	}
	name, args := body.Name, body.Arguments
	if body.ToolName != "" || body.Server != "" {
		if body.ToolName == "" {
			restFail(w, http.StatusBadRequest, "VALIDATION_ERROR", "toolName is required with server", nil)
			return
		}
		args = body.Input
		var ok bool
		if body.Server == "" {
			// {"toolName":"everything.echo"}: the name a client sees,
			// as "name" is.
			name = body.ToolName
		} else if name, ok = g.restName(r, body.Server, body.ToolName); !ok {
			restFail(w, http.StatusNotFound, "TOOL_NOT_FOUND", "Tool not found: "+body.Server+"/"+body.ToolName, nil)
			return
		}
	}
	if name == "" {
		restFail(w, http.StatusBadRequest, "VALIDATION_ERROR", `give "server" and "toolName", or "name"`, nil)
		return
	}
	if a := bytes.TrimSpace(args); len(a) == 0 || string(a) == "null" {
		args = json.RawMessage(`{}`)
	}
	if !g.scopesOK(w, r, []inMsg{readMsg(restAsCall(name, args))}) {
		return
	}
	ctx := WithClient(r.Context(), "REST")
	if g.opts.Tracer != nil {
		ctx = traceContext.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	res, rpcErr := g.Call(ctx, name, args)
	if rpcErr != nil {
		status, code := restError(rpcErr)
		if status == http.StatusTooManyRequests {
			setRetryAfter(w, rpcErr.Data)
		}
		details := map[string]any{"jsonrpcCode": rpcErr.Code}
		var data map[string]any
		if len(rpcErr.Data) > 0 && json.Unmarshal(rpcErr.Data, &data) == nil {
			for k, v := range data {
				details[k] = v
			}
		}
		restFail(w, status, code, rpcErr.Message, details)
		return
	}
	var out struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		restFail(w, http.StatusInternalServerError, "INTERNAL_ERROR", "undecodable tool result: "+err.Error(), nil)
		return
	}
	text := ""
	for _, c := range out.Content {
		if c.Type == "text" {
			text = c.Text
			break
		}
	}
	if out.IsError {
		if invalidArguments(text) {
			restFail(w, http.StatusBadRequest, "VALIDATION_ERROR", text, map[string]any{"result": json.RawMessage(res)})
			return
		}
		restFail(w, http.StatusInternalServerError, "TOOL_EXECUTION_ERROR", text, map[string]any{"result": json.RawMessage(res)})
		return
	}
	var result any = text
	switch {
	case len(out.StructuredContent) > 0 && string(out.StructuredContent) != "null":
		result = out.StructuredContent
	case json.Valid([]byte(text)) && strings.TrimSpace(text) != "":
		result = json.RawMessage(text)
	}
	writeJSONStatus(w, http.StatusOK, map[string]any{"success": true, "result": result})
}

// invalidArguments reports whether an isError result's text is the
// caller's fault: the arguments did not match the tool's input schema.
// The TypeScript SDK, which most servers are built on, answers so with the
// result "MCP error -32602: Input validation error: ..." rather than a
// JSON-RPC error (which restError maps to 400 itself).
func invalidArguments(text string) bool {
	return strings.HasPrefix(text, "MCP error -32602:")
}

// decodeRESTCall decodes POST /mcp/call's body as strictly as /mcp reads
// a message: one JSON value with nothing after it, an object, and no member
// that decoders could read differently (wire.Ambiguous, the rule /mcp
// applies too): a member given twice, or in another case, would let
// whatever checked the body before the gateway see one tool while the
// gateway calls another, and the arguments reach the tool as they are.
func decodeRESTCall(body []byte) (restCall, error) {
	var c restCall
	if err := json.Unmarshal(body, &c); err != nil {
		return c, err
	}
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return c, errors.New("not an object")
	}
	if a := wire.Ambiguous(body, &restMembers); a != nil {
		return c, a
	}
	return c, nil
}

// restMembers are the members of POST /mcp/call's body (restCall).
var restMembers = wire.Known{Names: []string{"server", "toolName", "input", "name", "arguments"}}

// restName finds the name a client calls a backend's tool by. A tool of a
// backend that is down is not listed; its name is built from the prefix,
// so that the call reports the backend's state. Both come from the
// configuration in force (SetServers), as the MCP front's names do.
//
// A server the policy shows nothing of is unknown to the caller, as one
// that does not exist; a tool it hides gets the name its prefix makes, and
// the call answers that it is not found, as for a tool that does not
// exist.
func (g *Gateway) restName(r *http.Request, server, tool string) (string, bool) {
	up := upstreamCaller(PrincipalOf(r.Context()))
	g.waitFirstStarts(r.Context(), up)
	access := g.decision(r.Context())
	if !access.AllowsServer(server) {
		return "", false
	}
	for _, t := range g.toolsOf(up) {
		if t.Server == server && t.Own == tool && access.Allows(policy.Tool, server, tool) {
			return t.Name, true
		}
	}
	if prefix, ok := g.prefixes()[server]; ok {
		return g.namer(false).name(prefix, tool), true
	}
	return "", false
}

// decision is what the caller of ctx may see (Gateway.access; nil:
// everything).
func (g *Gateway) decision(ctx context.Context) *policy.Decision {
	return g.access(PrincipalOf(ctx), g.profileOf(ctx))
}

// toolPolicyServer is the server a tool of ToolInfo is named by in the
// policy: the gateway's own tools are the gateway's.
func toolPolicyServer(server string) string {
	if server == "" {
		return policy.Gateway
	}
	return server
}

// restError maps a call's JSON-RPC error to an HTTP status and a REST
// error code (docs/http.md has the table).
func restError(e *jsonrpc.Error) (int, string) {
	var data struct {
		State  string `json:"state"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(e.Data, &data)
	switch {
	case e.Code == codeServerError && data.State == "crashed":
		return http.StatusServiceUnavailable, "SERVER_CRASHED"
	case e.Code == codeServerError:
		return http.StatusServiceUnavailable, "SERVER_NOT_RUNNING"
	case e.Code == CodeRefused && data.Reason == "withheld":
		return http.StatusForbidden, "TOOL_WITHHELD"
	case e.Code == CodeRefused:
		return http.StatusForbidden, "CALL_REFUSED"
	case e.Code == codeRateLimited:
		return http.StatusTooManyRequests, "RATE_LIMITED"
	case e.Code == codeInsufficientScope:
		return http.StatusForbidden, "INSUFFICIENT_SCOPE"
	case e.Code == CodeToolFailed && data.Reason == "timeout":
		return http.StatusGatewayTimeout, "TIMEOUT_ERROR"
	case e.Code == jsonrpc.CodeInternalError && data.Reason == "audit":
		return http.StatusInternalServerError, "AUDIT_FAILED"
	case e.Code == jsonrpc.CodeParseError:
		return http.StatusInternalServerError, "INTERNAL_ERROR"
	case e.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(e.Message, "Tool not found"):
		return http.StatusNotFound, "TOOL_NOT_FOUND"
	case e.Code == jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound, "TOOL_NOT_FOUND"
	case e.Code == jsonrpc.CodeInvalidRequest, e.Code == jsonrpc.CodeInvalidParams:
		return http.StatusBadRequest, "VALIDATION_ERROR"
	}
	return http.StatusInternalServerError, "TOOL_EXECUTION_ERROR"
}

func restFail(w http.ResponseWriter, status int, code, msg string, details map[string]any) {
	e := map[string]any{"code": code, "message": msg}
	if details != nil {
		e["details"] = details
	}
	writeJSONStatus(w, status, map[string]any{"success": false, "error": e})
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// admitREST takes a REST request from its principal's identity bucket;
// over the limit it answers 429 RATE_LIMITED with Retry-After.
func (g *Gateway) admitREST(w http.ResponseWriter, r *http.Request) bool {
	e := g.admitRequests(PrincipalOf(r.Context()), 1)
	if e == nil {
		return true
	}
	rpc := e.rpc()
	setRetryAfter(w, rpc.Data)
	restFail(w, http.StatusTooManyRequests, "RATE_LIMITED", rpc.Message, map[string]any{"jsonrpcCode": rpc.Code, "retryAfter": retrySeconds(e.retryAfter), "limit": e.limit})
	return false
}

// setRetryAfter sets Retry-After from the retryAfter of a rate limit
// error's data.
func setRetryAfter(w http.ResponseWriter, errData json.RawMessage) {
	var data struct {
		RetryAfter float64 `json:"retryAfter"`
	}
	if json.Unmarshal(errData, &data) == nil {
		w.Header().Set("Retry-After", retryHeader(time.Duration(data.RetryAfter*float64(time.Second))))
	}
}

// restAsCall is a REST call as the tools/call message it stands for, for
// the checks made of MCP requests (scopesOK).
func restAsCall(name string, args json.RawMessage) []byte {
	params, _ := wire.SetMember(json.RawMessage(`{}`), "name", mustJSON(name))
	params, _ = wire.SetMember(params, "arguments", args)
	return wire.AppendRequest(nil, json.RawMessage(`0`), "tools/call", params)
}
