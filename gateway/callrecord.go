package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CallRecord describes one finished tools/call, for metrics (Options.OnCall)
// and the audit log (Options.Audit).
type CallRecord struct {
	Time     time.Time // when the call began
	Server   string    // the backend; "" for the gateway's own tools and unknown names
	Tool     string    // the name the client called; through gateway.call_tool, the name it gave
	Own      string    // the backend's own name of the tool, when there is a backend
	Via      string    // the meta tool the call came through (lazy mode, run_script), if any
	RunID    string    // the run_script run the call is, or that made it (docs/code-mode.md)
	Client   string    // the client's clientInfo.name
	Identity string    // whom the HTTP front authenticated (the principal's key), if anyone
	Outcome  string    // "ok", "tool_error" (isError result), or the REST error code in lower case
	Message  string    // the error's message, when the outcome is an error (secrets masked)
	Duration time.Duration
	// ArgsDigest is "sha256:" and the hex SHA-256 of the arguments as the
	// client sent them: calls with the same arguments can be told apart
	// from others without the arguments being kept.
	ArgsDigest string
	// Args are the arguments, with secrets masked; only with
	// gateway.audit.arguments.
	Args        json.RawMessage
	ResultBytes int // the size of the result the client was sent
	Redactions  int // secrets masked in it (gateway.redact: results)
}

// callEnd is run with a tools/call's result (or error) before the client
// is sent it: it masks secrets in it when gateway.redact is results,
// records the call in the audit log (failing it when that fails), reports
// it to Options.OnCall, and returns what to send.
type callEnd func(result json.RawMessage, e *jsonrpc.Error) (json.RawMessage, *jsonrpc.Error)

// recorder returns the callEnd of run's call, or nil when there is neither
// a hook nor redaction (the hot path then does nothing more).
func (f *front) recorder(run *callRun) callEnd {
	on, audit := f.g.opts.OnCall, f.g.opts.Audit
	redact := f.g.redacts()
	if on == nil && audit == nil && !redact {
		return nil
	}
	tc := run.tc
	rec := CallRecord{Time: time.Now(), Tool: tc.name}
	if tc.script.makes() {
		rec.Via = tc.script.by
	}
	args := tc.args
	if r, ok := f.lookupTool(tc.name); ok && r.kind == metaTool && (r.own == metaCall || r.own == metaCallRead) && !tc.script.makes() {
		// The call a meta tool makes is the one to account for.
		rec.Via = tc.name
		rec.Tool, _ = wire.Unquote(wire.Member(tc.args, "name"))
		args = wire.Member(tc.args, "arguments")
	}
	if r, ok := f.lookupTool(rec.Tool); ok {
		rec.Server, rec.Own = r.server, r.own
	} else if r, ok := f.orphan(rec.Tool); ok {
		rec.Server, rec.Own = r.server, r.own
	}
	if rec.Server == "" {
		// A name nothing routes to (withheld, or unknown): the server its
		// prefix names, if one does.
		f.owners(rec.Tool, func(server, own string) bool {
			if own == rec.Tool {
				return false // a server without a prefix: any name would do
			}
			rec.Server, rec.Own = server, own
			return true
		})
	}
	if rec.Server == "" {
		rec.Own = ""
	}
	if on != nil || audit != nil {
		rec.Client, rec.Identity = f.declared().client, f.grant().identity
		args = bytes.TrimSpace(args)
		sum := sha256.Sum256(args)
		rec.ArgsDigest = "sha256:" + hex.EncodeToString(sum[:])
		if f.g.opts.Config.Gateway.Audit.Arguments && len(args) > 0 {
			masked, _ := safetext.MaskShapes(args)
			rec.Args = bytes.Clone(masked)
		}
	}
	return func(result json.RawMessage, e *jsonrpc.Error) (json.RawMessage, *jsonrpc.Error) {
		if redact {
			result, e, rec.Redactions = redactResult(result, e)
		}
		if on == nil && audit == nil {
			return result, e
		}
		// A run's id is known once it starts (runScript).
		if s := run.tc.script; s != nil {
			rec.RunID = s.id
		}
		rec.Outcome = "ok"
		switch {
		case e != nil:
			_, code := restError(e)
			rec.Outcome = strings.ToLower(code)
			rec.Message, _ = safetext.MaskShapesString(safetext.Strip(wire.Truncate(e.Message, 400, ""), false))
		case bytes.Contains(result, []byte(`"isError":true`)):
			rec.Outcome = "tool_error"
		}
		rec.Duration = time.Since(rec.Time)
		rec.ResultBytes = len(result)
		if audit != nil {
			if err := audit(rec); err != nil {
				f.g.log.Error("a call's audit entry could not be written: the call fails", "server", rec.Server, "err", err)
				result, e = nil, rpcError(&auditError{err}, kindTool, rec.Tool, false)
				_, code := restError(e)
				rec.Outcome, rec.Message, rec.ResultBytes = strings.ToLower(code), "", 0
			}
		}
		if on != nil {
			on(rec)
		}
		return result, e
	}
}

// redacts reports whether gateway.redact is results: what a backend
// answers or says to a client is masked before the client has it — a
// tool's result or error (recorder; a held call's too), a prompt, a
// resource's contents, a completion's values, a task's result
// (redacting), a progress message (session.progress) and a log message
// (BackendLog).
func (g *Gateway) redacts() bool { return g.opts.Config.Gateway.Redact == "results" }

// redacting returns serve with its answer, and an error's message and
// data, masked as a tool's result is (redactResult) when the gateway
// redacts, else serve itself.
func (f *front) redacting(serve func(context.Context, json.RawMessage) (json.RawMessage, error)) func(context.Context, json.RawMessage) (json.RawMessage, error) {
	if !f.g.redacts() {
		return serve
	}
	return func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
		raw, err := serve(ctx, params)
		var e *jsonrpc.Error
		if err != nil {
			// Masked as the client would read it, so mapped here; the
			// answer path passes a *jsonrpc.Error on as it is.
			e = rpcError(err, "", "", f.g.opts.Config.Server.Debug)
		}
		raw, e, _ = redactResult(raw, e)
		if e != nil {
			return nil, e
		}
		return raw, nil
	}
}

// redactResult masks the secrets in a result, or in an error's message and
// data, and says how many it masked.
func redactResult(result json.RawMessage, e *jsonrpc.Error) (json.RawMessage, *jsonrpc.Error, int) {
	if e != nil {
		msg, n := safetext.MaskShapesString(e.Message)
		data, m := safetext.MaskShapes(e.Data)
		if n+m == 0 {
			return result, e, 0
		}
		return result, &jsonrpc.Error{Code: e.Code, Message: msg, Data: data}, n + m
	}
	out, n := safetext.MaskShapes(result)
	return out, nil, n
}

type clientKey struct{}

// WithClient returns ctx naming the client of Gateway.Call (the REST
// API, the call command) in its CallRecord.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// clientOf is the client ctx names, or "".
func clientOf(ctx context.Context) string {
	s, _ := ctx.Value(clientKey{}).(string)
	return s
}

// IdentityOf is who the principal ctx carries (WithPrincipal) is, for the
// audit log: its key, or "" when there is none or it is anonymous.
func IdentityOf(ctx context.Context) string {
	return identity(PrincipalOf(ctx))
}

func identity(p *authn.Principal) string {
	if p == nil || p.Auth == "none" {
		return ""
	}
	return p.Key
}
