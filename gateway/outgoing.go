package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A backend's requests to the client (sampling, elicitation, roots) go out
// on the session as the backend wrote them (but for gateway.redact:
// results, which masks their secrets), and the client's answer goes
// back as the client wrote it: no go-sdk type in between, which would
// re-encode a form's properties in its own order, fill an answer with the
// schema's defaults, or drop fields it does not know. Their ids are
// strings ("gw-N"), go-sdk's own requests have numbers, so the two never
// meet.

// outReply is the client's answer to one of the session's requests.
type outReply struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// request sends method with params to the client and waits for its
// answer. during, if not nil, is the client's request being served, whose
// stream carries it. If ctx ends first (the backend cancelled), the client
// is sent notifications/cancelled.
func (s *session) request(ctx context.Context, during json.RawMessage, method string, params json.RawMessage) (json.RawMessage, error) {
	if params != nil {
		var err error
		if params, err = wire.Compact(params); err != nil {
			return nil, err
		}
		if method != "roots/list" && s.f.g.redacts() {
			// What the client is asked (an elicitation's message, the
			// messages its model is to sample on) is what a backend
			// tells it: masked as its results are, as it is when a
			// client of 2026-07-28 gets it in an input_required result.
			params, _ = safetext.MaskShapes(params)
		}
	}
	ch := make(chan outReply, 1)
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return nil, mcp.ErrConnectionClosed
	}
	s.nextOut++
	id := json.RawMessage(outIDPrefix + strconv.FormatInt(s.nextOut, 10) + `"`)
	s.out[string(id)] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.out, string(id))
		s.mu.Unlock()
	}()
	if err := s.s.send(during, wire.AppendRequest(nil, id, method, params), false, false); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		p, _ := json.Marshal(map[string]any{"requestId": id, "reason": "cancelled by the server"})
		_ = s.s.send(during, wire.AppendRequest(nil, nil, methodCancelled, p), false, false)
		return nil, ctx.Err()
	case <-s.closed:
		return nil, mcp.ErrConnectionClosed
	}
}

// outIDPrefix starts the id of every request of the session's own.
const outIDPrefix = `"gw-`

// reply hands the client's response to the session's request it answers,
// and reports whether the id is one of the session's: a late answer to a
// request that was cancelled is dropped here.
func (s *session) reply(m *wire.Message) bool {
	if !bytes.HasPrefix(m.ID, []byte(outIDPrefix)) {
		return false
	}
	s.mu.Lock()
	ch := s.out[string(m.ID)]
	s.mu.Unlock()
	if ch == nil {
		s.log.Debug("dropped an answer to a request no longer waiting", "id", string(m.ID))
		return true
	}
	r := outReply{result: m.Result}
	if m.Error != nil {
		var e jsonrpc.Error
		if err := json.Unmarshal(m.Error, &e); err != nil {
			e = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "invalid error object"}
		}
		r.err = &e
	}
	select {
	case ch <- r:
	default: // a second response to the same id
	}
	return true
}
