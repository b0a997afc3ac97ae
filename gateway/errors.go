package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error codes of the gateway (docs/errors.md) beyond JSON-RPC's own.
const (
	codeServerError = -32000 // backend not running, crashed, failed to start
	CodeToolFailed  = -32001 // backend call timed out; answer tool failed
	// CodeRefused: the trust layer refused the call (docs/trust.md): its
	// definition is withheld, or a destructive call was not confirmed.
	CodeRefused = -32003
)

// What was called, for error messages and data keys.
const (
	kindTool     = "Tool"
	kindPrompt   = "Prompt"
	kindResource = "Resource"
)

// rpcError maps an error from a tool, prompt or resource call to the JSON-RPC
// error the client sees. It is the one place where the gateway's errors
// become protocol errors, called where a transport answers (the session's
// answer path, the tool call core's delivery); kind and name say what was
// called (the front name, or a resource's URI) unless err carries its own
// (called).
func rpcError(err error, kind, name string, debug bool) *jsonrpc.Error {
	if c := (*calledError)(nil); errors.As(err, &c) {
		kind, name = c.kind, c.name
	}
	var (
		rpc       *jsonrpc.Error
		srvErr    *backends.ServerError
		timeout   *backends.TimeoutError
		backend   *backends.RPCError
		argErr    *answer.ArgumentError
		apiErr    *answer.APIError
		notFound  *notFoundError
		meant     *didYouMeanError
		notListed *backends.NotListedError
		ambiguous *ambiguousError
		withheld  *backends.WithheldError
		refused   *refusedError
		limited   *limitedError
		scope     *scopeError
		audited   *auditError
		noCred    *backends.CallerError
		signIn    *backends.SignInError
	)
	switch {
	case errors.As(err, &rpc):
		return rpc
	case errors.As(err, &ambiguous):
		return withData(jsonrpc.CodeInvalidParams, ambiguous.Error(), map[string]any{strings.ToLower(ambiguous.kind): ambiguous.name, "candidates": ambiguous.candidates})
	case errors.As(err, &limited):
		return limited.rpc()
	case errors.As(err, &scope):
		return withData(codeInsufficientScope, scope.Error(), map[string]any{"reason": "insufficient_scope", "scope": strings.Join(scope.missing, " ")})
	case errors.As(err, &notListed):
		// The gateway's routing and the backend's live list disagreed
		// (a list changed meanwhile): to the client, the name has nothing.
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: (&notFoundError{kind, name}).Error()}
	case errors.As(err, &meant):
		return withData(jsonrpc.CodeInvalidParams, meant.Error(), map[string]any{"did_you_mean": meant.names})
	case errors.As(err, &notFound):
		if notFound.kind == kindResource {
			// As 2026-07-28 says (SEP-2164): the URI in data.
			return withData(jsonrpc.CodeInvalidParams, notFound.Error(), map[string]string{"uri": notFound.name})
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: notFound.Error()}
	case errors.As(err, &withheld):
		return withData(CodeRefused, withheld.Error(), map[string]any{
			"server":      withheld.Server,
			withheld.Kind: withheld.Name,
			"reason":      "withheld",
			"withheld":    withheld.Reason,
			"digest":      withheld.Digest,
			"review":      "mcp-gateway tools --changes",
			"approve":     backends.ApproveCommand(withheld.Server, withheld.Name, withheld.Digest),
		})
	case errors.As(err, &refused):
		return withData(CodeRefused, refused.Error(), map[string]any{
			"server": refused.server,
			"tool":   refused.tool,
			"reason": refused.reason,
		})
	case errors.As(err, &signIn):
		return withData(CodeRefused, signIn.Error(), map[string]any{"server": signIn.Server, "reason": "sign_in", "url": signIn.URL})
	case errors.As(err, &noCred):
		return withData(CodeRefused, noCred.Error(), map[string]any{"server": noCred.Server, "reason": "no_credential"})
	case errors.As(err, &srvErr):
		tail := srvErr.StderrTail
		if tail == nil {
			tail = []string{}
		}
		return withData(codeServerError, srvErr.Error(), map[string]any{
			"server":      srvErr.Server,
			"state":       srvErr.State,
			"reason":      srvErr.Reason,
			"stderr_tail": tail,
		})
	case errors.As(err, &timeout):
		msg := fmt.Sprintf("%s '%s' timed out after %s", kind, name, roundDuration(timeout.Timeout))
		data := map[string]any{
			"server":              timeout.Server,
			strings.ToLower(kind): name,
			"timeout_ms":          timeout.Timeout.Milliseconds(),
			"reason":              "timeout",
		}
		if timeout.Starting {
			msg += ": MCP server '" + timeout.Server + "' is still starting"
			data["state"] = backends.Starting
		}
		return withData(CodeToolFailed, msg, data)
	case errors.As(err, &backend):
		return &jsonrpc.Error{Code: backend.Code, Message: backend.Message, Data: addServer(backend.Data, backend.Server)}
	case errors.As(err, &argErr):
		return withData(jsonrpc.CodeInvalidParams, argErr.Reason, map[string]any{"reason": argErr.Reason})
	case errors.As(err, &apiErr):
		data := map[string]any{"message": wire.Truncate(apiErr.Message, 400, "")}
		if debug {
			if apiErr.Status != 0 {
				data["status"] = apiErr.Status
			}
			if apiErr.Type != "" {
				data["type"] = apiErr.Type
			}
			if apiErr.Code != "" {
				data["code"] = apiErr.Code
			}
			if apiErr.Name != "" {
				data["name"] = apiErr.Name
			}
		}
		return withData(CodeToolFailed, "answer failed", data)
	case errors.As(err, &audited):
		return withData(jsonrpc.CodeInternalError, audited.Error(), map[string]any{"reason": "audit"})
	case errors.Is(err, context.Canceled):
		// The client cancelled; the session drops this response.
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Request cancelled"}
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
}

// calledError says what a failed request called, so that a handler returns
// a Go error and the answer path maps it (rpcError) with the right kind and
// name: a timeout names the prompt, a resource not found its URI. Its
// message is err's, unchanged.
type calledError struct {
	kind, name string
	err        error
}

// called wraps err (nil stays nil) with what was called.
func called(kind, name string, err error) error {
	if err == nil {
		return nil
	}
	return &calledError{kind, name, err}
}

func (e *calledError) Error() string { return e.err.Error() }
func (e *calledError) Unwrap() error { return e.err }

// auditError fails a call whose audit entry could not be written
// (Options.Audit): its result is not sent.
type auditError struct{ err error }

func (e *auditError) Error() string {
	// What kept it from being written (a path, a disk) is the operator's
	// to read, in the gateway's log.
	return "the call ran, but its audit entry could not be written, so its result is withheld; the gateway's log says why"
}

func (e *auditError) Unwrap() error { return e.err }

// The errors of the envelope, before any method is looked at.
var errDuplicateID = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "request ID already in use"}

// errParse answers input that is not JSON (or not a message at all).
func errParse(reason string) *jsonrpc.Error {
	return withData(jsonrpc.CodeParseError, "Parse error", map[string]string{"reason": reason})
}

// errInvalidRequest answers JSON that is not a JSON-RPC 2.0 request.
func errInvalidRequest(reason string) *jsonrpc.Error {
	return withData(jsonrpc.CodeInvalidRequest, "Invalid Request", map[string]string{"reason": reason})
}

// appendError appends an error response with the client's exact id (nil:
// null).
func appendError(buf []byte, id json.RawMessage, e *jsonrpc.Error) []byte {
	return wire.AppendError(buf, id, e.Code, e.Message, e.Data)
}

func errInvalidParams(reason string) *jsonrpc.Error {
	return withData(jsonrpc.CodeInvalidParams, reason, map[string]any{"reason": reason})
}

// ambiguousError is returned by routing for a tool's own name (or a
// resource's own ui:// URI) that several backends' apps have: it maps to
// -32602 naming the candidates, the names the client can call instead.
type ambiguousError struct {
	kind, name string
	candidates []string
}

func (e *ambiguousError) Error() string {
	return fmt.Sprintf("%s '%s' is ambiguous: it is %s; use one of those names", e.kind, e.name, strings.Join(e.candidates, " and "))
}

// notFoundError is returned by routing for a name nothing has; it maps to
// -32602 "Tool not found: NAME" (or Prompt, Resource).
type notFoundError struct{ kind, name string }

func (e *notFoundError) Error() string { return e.kind + " not found: " + e.name }

func withData(code int64, msg string, data any) *jsonrpc.Error {
	raw, err := json.Marshal(data)
	if err != nil {
		return &jsonrpc.Error{Code: code, Message: msg}
	}
	return &jsonrpc.Error{Code: code, Message: msg, Data: raw}
}

// addServer adds "server" to a backend error's data when data is an object
// (or absent); any other data is wrapped as {"server", "data"}. The backend's
// own fields are kept byte for byte.
func addServer(data json.RawMessage, server string) json.RawMessage {
	serverJSON, _ := json.Marshal(server)
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		return json.RawMessage(`{"server":` + string(serverJSON) + `}`)
	case trimmed[0] == '{':
		var probe map[string]json.RawMessage
		if json.Unmarshal(trimmed, &probe) != nil {
			break
		}
		if _, ok := probe["server"]; ok {
			return trimmed
		}
		if len(probe) == 0 {
			return json.RawMessage(`{"server":` + string(serverJSON) + `}`)
		}
		out := make([]byte, 0, len(trimmed)+len(serverJSON)+12)
		out = append(out, `{"server":`...)
		out = append(out, serverJSON...)
		out = append(out, ',')
		out = append(out, trimmed[1:]...)
		return out
	}
	return json.RawMessage(`{"server":` + string(serverJSON) + `,"data":` + string(trimmed) + `}`)
}

// roundDuration prints 30s rather than 30.000012s.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Millisecond)
	}
	return d
}
