package backends

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A backend of the per-request era that needs something of its client
// mid-request answers input_required: inputRequests (each a request of
// the handshake era: sampling, elicitation, roots/list) and a requestState
// of its own. Whoever cannot hand that result on as it is — a client of
// the handshake era behind the gateway, or a program without a client of
// its own — answers the requests and asks again with the answers and the
// backend's requestState (Fulfill), until the backend answers for good.

// maxInputRounds bounds the rounds of one request, as go-sdk's client does.
const maxInputRounds = 10

// InputRequired reports whether a backend's result asks for input.
func InputRequired(result json.RawMessage) bool {
	return bytes.Contains(result, []byte(`"input_required"`)) &&
		string(bytes.TrimSpace(wire.Member(result, "resultType"))) == `"input_required"`
}

// An Asker answers one input request (method and params as the backend
// wrote them) with its raw result.
type Asker func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// Fulfill answers a backend's input_required result: each input request
// is asked of ask, and the request is made again (retry) with extra — the
// members to add to its params: inputResponses holding the answers, and
// the backend's requestState when it gave one — until the backend's result
// needs no more input, which it returns. A nil ask, an input request
// without a method, or more than maxInputRounds rounds fail with a
// JSON-RPC internal error; ask's and retry's errors are returned as they
// are. The result is valid after the call (retry's results are copies).
func Fulfill(ctx context.Context, result json.RawMessage, ask Asker, retry func(ctx context.Context, extra json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	for round := 0; InputRequired(result); round++ {
		if round == maxInputRounds {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the server asked for input more than %d times", maxInputRounds)}
		}
		if ask == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server asks the client for input, which this client cannot be asked"}
		}
		responses := json.RawMessage(`{}`)
		var failed error
		err := wire.EachMember(wire.Member(result, "inputRequests"), func(key string, req json.RawMessage) {
			if failed != nil {
				return
			}
			method, ok := wire.Unquote(wire.Member(req, "method"))
			if !ok {
				failed = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("input request %q names no method", key)}
				return
			}
			res, err := ask(ctx, method, wire.Member(req, "params"))
			if err != nil {
				failed = err
				return
			}
			responses, _ = wire.SetMember(responses, key, res)
		})
		if err = cmp.Or(err, failed); err != nil {
			return nil, err
		}
		extra, _ := wire.SetMember(json.RawMessage(`{}`), "inputResponses", responses)
		if st := wire.Member(result, "requestState"); st != nil {
			extra, _ = wire.SetMember(extra, "requestState", st)
		}
		if result, err = retry(ctx, extra); err != nil {
			return nil, err
		}
	}
	return result, nil
}
