package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CallRecord describes one finished tools/call, for metrics
// (Options.OnCall).
type CallRecord struct {
	Server   string // the backend; "" for the gateway's own tools and unknown names
	Tool     string // the name the client called
	Outcome  string // "ok", "tool_error" (isError result), or the REST error code in lower case
	Duration time.Duration
}

// recorder returns the function that reports a call's end to
// Options.OnCall, or nil when there is no hook (the hot path then does
// nothing more).
func (f *front) recorder(name string) func(result json.RawMessage, e *jsonrpc.Error) {
	on := f.g.opts.OnCall
	if on == nil {
		return nil
	}
	start := time.Now()
	server := ""
	if r, ok := f.lookupTool(name); ok {
		server = r.server
	} else if r, ok := f.orphan(name); ok {
		server = r.server
	}
	return func(result json.RawMessage, e *jsonrpc.Error) {
		outcome := "ok"
		switch {
		case e != nil:
			_, code := restError(e)
			outcome = strings.ToLower(code)
		case bytes.Contains(result, []byte(`"isError":true`)):
			outcome = "tool_error"
		}
		on(CallRecord{Server: server, Tool: name, Outcome: outcome, Duration: time.Since(start)})
	}
}
