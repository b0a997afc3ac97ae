package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of the per-request era (2026-07-28) receives no requests: a
// server that needs something of it mid-call — a sampling, an elicitation,
// its roots — answers the call (a tools/call, prompts/get or
// resources/read: holdable) with an input_required result naming what
// it needs and an opaque requestState, and the client calls again with
// inputResponses and that state. A backend of the handshake era asks by
// sending requests instead. The gateway joins the two: when such a backend
// asks during a call of a per-request client, the call is held — the
// backend's call and its request stay in flight — and the client's request
// is answered input_required, with a requestState sealed by the gateway
// (requeststate.go) that names the held call. The client's next call with
// that state answers the backend's requests and takes the held call's
// place: it gets the backend's next request, or the call's result. A held
// call that nobody comes back for within holdTimeout is cancelled at the
// backend. A held call lives in the gateway process that holds it: a retry
// that reaches another replica is told so (docs/deploy.md). It is its
// caller's: the state is sealed for the caller's principal, so another's
// retry with it opens to nothing, and the caller's own retry is resolved
// again under its decision now (resume).

// holdTimeout is how long a held call waits for the client to call again.
const holdTimeout = 5 * time.Minute

// hold is one held call.
type hold struct {
	g      *Gateway
	id     string
	server string
	method string          // the held request's method and name: a retry must be
	name   string          // the same request
	caps   json.RawMessage // the capabilities the held request declared
	who    string          // the caller's principal key (front.identity): the state is sealed for it

	mu       sync.Mutex
	cancel   backends.CancelFunc // the backend call's
	asks     map[string]*ask     // the backend's requests not answered yet, by key
	next     int                 // the number of the next key
	to       *heldBy             // the client's request the next answer goes to; nil until the client calls again
	finished bool                // the backend call ended with result or err, which wait for the client
	result   json.RawMessage
	err      error
	timer    *time.Timer // abandons the hold while nobody is attached
	// pending is the backend call's progress while no client request
	// stands for it (to is nil), for the one that calls again: the
	// first heldProgress in order, then the latest in place of the last.
	pending []*mcp.ProgressNotificationParams
}

// heldProgress bounds the progress a held call keeps for its client's
// retry: a burst passes as it came, a flood costs one notification more.
const heldProgress = 32

// heldBy is a client's request that stands for a held call.
type heldBy struct {
	s     *session
	c     *call
	token json.RawMessage // its progressToken (call.token): the held call's progress goes out under it
}

// ask is one request of the backend, waiting for the client's answer.
type ask struct {
	method string
	params json.RawMessage
	reply  chan outReply
}

// holds are the calls this gateway process holds, by id.
type holds struct {
	mu sync.Mutex
	m  map[string]*hold
}

func (hs *holds) get(id string) *hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.m[id]
}

func (hs *holds) put(h *hold) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = make(map[string]*hold)
	}
	hs.m[h.id] = h
}

// waitingOn returns a hold of server whose backend call is in flight: a
// request of that backend may be for it, though its client's request
// was answered input_required and the retry has not come yet. who, when
// not "", is the caller the request is of (backends.RequestCaller): only
// that caller's holds.
func (hs *holds) waitingOn(server, who string) *hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, h := range hs.m {
		h.mu.Lock()
		waiting := h.server == server && !h.finished && (who == "" || h.who == who)
		h.mu.Unlock()
		if waiting {
			return h
		}
	}
	return nil
}

func (hs *holds) drop(h *hold) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.m, h.id)
}

// holdable reports whether a request of the per-request era may be
// answered input_required, and so held.
func holdable(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
		return true
	}
	return false
}

// servedBy records that backend server serves call c, so that the
// server's requests meanwhile find it (callTo).
func (s *session) servedBy(c *call, server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls[string(c.id)] == c {
		c.server = server
	}
}

// errClientLacks answers a backend's request that the client's call did
// not declare the capability for (it must not be asked).
func errClientLacks(method string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the client did not declare the capability for " + method}
}

// ask puts a backend's request to the per-request client whose call c
// it is serving: c becomes a held call (if it is not one yet), and the
// request goes out in an input_required answer. It returns the client's
// answer, or an error when the hold ends first.
func (s *session) ask(ctx context.Context, c *call, server, method string, params json.RawMessage) (json.RawMessage, error) {
	if !declares(c.caps, method) {
		return nil, errClientLacks(method)
	}
	h := s.holdOf(c, server)
	if h == nil {
		return nil, errors.New("the call ended before the server's request")
	}
	return h.ask(ctx, method, params)
}

// ask puts a backend's request to the client of the held call: in the
// input_required answer to the client request attached now, or to the
// one that calls again. It returns the client's answer, or an error when
// the hold ends first.
func (h *hold) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if !declares(h.caps, method) {
		return nil, errClientLacks(method)
	}
	a := &ask{method: method, params: params, reply: make(chan outReply, 1)}
	h.mu.Lock()
	h.next++
	key := "gw" + strconv.Itoa(h.next)
	h.asks[key] = a
	h.mu.Unlock()
	h.askNow()
	select {
	case r := <-a.reply:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		h.mu.Lock()
		delete(h.asks, key)
		h.mu.Unlock()
		return nil, ctx.Err()
	}
}

// holdOf returns the hold c is (a new one the first time), or nil when c
// was answered already.
func (s *session) holdOf(c *call, server string) *hold {
	who := s.f.callerIdentity()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.hold != nil {
		return c.hold
	}
	if s.calls[string(c.id)] != c {
		return nil
	}
	h := &hold{g: s.f.g, id: rand.Text(), server: server, method: c.method, name: c.name, caps: c.caps, who: who, cancel: c.cancel, asks: make(map[string]*ask), to: &heldBy{s: s, c: c, token: c.token}}
	c.hold = h
	if c.owned { // the call's goroutine belongs to the hold now, not the session
		c.owned = false
		s.wg.Done()
	}
	s.f.g.holds.put(h)
	return h
}

// askNow answers the attached client request, if any, with the backend's
// requests not answered yet.
func (h *hold) askNow() {
	h.mu.Lock()
	to := h.to
	if to == nil || len(h.asks) == 0 {
		h.mu.Unlock()
		return
	}
	h.to = nil
	reqs := json.RawMessage(`{}`)
	for key, a := range h.asks {
		entry, _ := wire.SetMember(json.RawMessage(`{}`), "method", mustJSON(a.method))
		if a.params != nil {
			entry, _ = wire.SetMember(entry, "params", a.params)
		}
		reqs, _ = wire.SetMember(reqs, key, entry)
	}
	h.armLocked()
	h.mu.Unlock()
	result, _ := wire.SetMember(json.RawMessage(`{"resultType":"input_required"}`), "inputRequests", reqs)
	result, _ = wire.SetMember(result, "requestState", mustJSON(h.g.sealer.seal(h.id, h.who, time.Now().Add(holdTimeout))))
	to.s.respond(to.c, result, nil)
}

// armLocked starts the wait for the client to call again; h.mu is held.
func (h *hold) armLocked() {
	if h.timer != nil {
		h.timer.Stop()
	}
	h.timer = time.AfterFunc(holdTimeout, h.abandon)
}

// abandon ends a hold nobody came back for: the backend's requests get an
// error and its call is cancelled.
func (h *hold) abandon() {
	h.mu.Lock()
	if h.to != nil {
		h.mu.Unlock()
		return // the client came back meanwhile
	}
	asks := h.asks
	h.asks = map[string]*ask{}
	cancel := h.cancel
	h.mu.Unlock()
	h.g.holds.drop(h)
	for _, a := range asks {
		a.reply <- outReply{err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client did not answer within " + holdTimeout.String()}}
	}
	if cancel != nil {
		cancel(json.RawMessage(`"the client did not call again"`))
	}
	h.g.log.Debug("held call abandoned", "server", h.server)
}

// progress passes the backend call's progress on to the client request
// that stands for the held call now, under that request's own token, or
// keeps it for the request that calls again (resume). It runs in the
// backend's read loop, before finish; h.mu orders it after the progress
// that resume passes on first.
func (h *hold) progress(p *mcp.ProgressNotificationParams) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.to != nil:
		h.to.progress(p)
	case len(h.pending) == heldProgress:
		h.pending[heldProgress-1] = p
	default:
		h.pending = append(h.pending, p)
	}
}

// progress writes p for the request, under its token; a request without
// one asked for no progress.
func (b *heldBy) progress(p *mcp.ProgressNotificationParams) {
	if b.token == nil {
		return
	}
	q := *p
	q.ProgressToken = b.token
	b.s.sendProgress(b.c.id, &q)
}

// finish takes the backend call's outcome: to the attached client request,
// or kept for the one that calls again.
func (h *hold) finish(result json.RawMessage, err error) {
	h.mu.Lock()
	to := h.to
	if to == nil {
		h.finished, h.result, h.err = true, bytes.Clone(result), err
		h.mu.Unlock()
		return
	}
	h.to = nil
	if h.timer != nil {
		h.timer.Stop()
	}
	h.mu.Unlock()
	h.g.holds.drop(h)
	to.deliver(result, err)
}

// deliver answers the request with a held call's outcome.
func (b *heldBy) deliver(result json.RawMessage, err error) {
	if err != nil {
		kind := kindTool
		switch b.c.method {
		case "prompts/get":
			kind = kindPrompt
		case "resources/read":
			kind = kindResource
		}
		b.s.respond(b.c, nil, rpcError(err, kind, b.c.name, b.s.f.g.opts.Config.Server.Debug))
		return
	}
	b.s.respond(b.c, result, nil)
}

// resume serves a client's call again with the held call id that a
// requestState the gateway sealed for this caller names (retryState): the
// answers go to the held call's requests, and c takes the held call's
// place. The call is resolved again first, as a new one would be: the
// caller's decision may have changed since (another token, a policy
// reloaded), and what it may no longer call is not found.
func (s *session) resume(c *call, params json.RawMessage, id string) {
	g := s.f.g
	var err error
	h := g.holds.get(id)
	if h == nil {
		err = errors.New("requestState names a call that has ended (its server answered, or nobody called again in time): call again")
	}
	if err == nil && (h.method != c.method || h.name != c.name) {
		err = fmt.Errorf("requestState is of a %s of %q, not of this %s of %q", h.method, h.name, c.method, c.name)
	}
	if err != nil {
		s.respond(c, nil, errInvalidParams(err.Error()))
		return
	}
	if kind, ok := s.f.stillReaches(h); !ok {
		// The hold stays for a retry the caller may still make (with
		// another token), or is abandoned in time.
		s.respond(c, nil, rpcError(&notFoundError{kind, h.name}, kind, h.name, g.opts.Config.Server.Debug))
		return
	}
	responses := wire.Member(params, "inputResponses")
	h.mu.Lock()
	if h.to != nil {
		h.mu.Unlock()
		s.respond(c, nil, errInvalidParams("requestState is in use by another call"))
		return
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	var answered []*ask
	var results []json.RawMessage
	_ = wire.EachMember(responses, func(key string, v json.RawMessage) {
		if a := h.asks[key]; a != nil {
			delete(h.asks, key)
			answered = append(answered, a)
			results = append(results, bytes.Clone(v))
		}
	})
	finished, result, ferr, cancel := h.finished, h.result, h.err, h.cancel
	to := &heldBy{s: s, c: c, token: c.token}
	if !finished {
		h.to = to
	}
	// The progress made while nobody stood for the call, before any
	// that follows (h.mu) and before the result. Progress waits in the
	// stream for a flush (sendLatest), which the backend's read loop
	// makes when it goes idle; it may be idle already, so this one is
	// flushed here.
	kept := len(h.pending) > 0 && to.token != nil
	for _, p := range h.pending {
		to.progress(p)
	}
	h.pending = nil
	h.mu.Unlock()
	if kept {
		if err := s.s.Send(outMsg{}); err != nil {
			s.log.Debug("flush to client", "err", err)
		}
	}
	s.mu.Lock()
	if s.calls[string(c.id)] == c {
		c.hold = h
		c.cancel = cancel
		c.server = h.server
	}
	s.mu.Unlock()
	if finished {
		g.holds.drop(h)
		to.deliver(result, ferr)
		return
	}
	for i, a := range answered {
		a.reply <- outReply{result: results[i]}
	}
	h.askNow() // what the client left unanswered, asked again
}

// stillReaches reports whether the caller of this front may make a held
// request now: its name, resolved under the caller's decision now, is the
// held server's (a tool or prompt), or the policy shows that server's
// resources. A refusal is reported as any hidden name is. kind is the
// request's kind of name.
func (f *front) stillReaches(h *hold) (kind string, ok bool) {
	f.rebuild(context.Background(), ifNone) // a request of the per-request era has a front of its own
	switch h.method {
	case "tools/call":
		r, found := f.lookupTool(h.name)
		if found && r.kind == backendTool && r.server == h.server {
			return kindTool, true
		}
		f.hidden(policy.Tool, h.name)
		return kindTool, false
	case "prompts/get":
		r, found := f.tables().prompts[h.name]
		if found && r.server == h.server {
			return kindPrompt, true
		}
		f.hidden(policy.Prompt, h.name)
		return kindPrompt, false
	}
	if e := f.grant().access.Explain(policy.Resource, h.server, ""); !e.Allowed {
		f.deny(policy.Resource, h.name, h.server, "", e)
		return kindResource, false
	}
	return kindResource, true
}

// retryState reads the requestState v of a per-request client's request c
// (a holdable one; nil when it has none): the held call a state the
// gateway sealed names (hold), or the backend's own state it wraps, which
// the backend is given back in its place (backend). A state another
// caller was given, or that is not the gateway's while the gateway binds
// states to callers (stateOwner), is refused (err) as one it never
// issued. For a single caller, a state that is not the gateway's is the
// backend's, passed through untouched: neither is returned.
func (s *session) retryState(c *call, v json.RawMessage) (hold string, backend json.RawMessage, err error) {
	if v == nil || string(v) == "null" {
		return "", nil, nil
	}
	st, ok := wire.Unquote(v)
	if !ok || !strings.HasPrefix(st, sealedPrefix) {
		if s.f.stateOwner() != "" {
			return "", nil, errStateInvalid
		}
		return "", nil, nil
	}
	o, err := s.f.g.sealer.openState(st, s.f.callerIdentity(), time.Now())
	switch {
	case err != nil:
		return "", nil, err
	case o.Kind == "":
		return o.Hold, nil, nil
	case o.Method != c.method || o.Name != c.name:
		return "", nil, fmt.Errorf("requestState is of a %s of %q, not of this %s of %q", o.Method, o.Name, c.method, c.name)
	}
	return "", o.State, nil
}

// sealBackendState returns a backend's result to the per-request client's
// request c with the requestState of an input_required answer wrapped for
// the caller (requeststate.go), when the gateway binds states to callers
// (stateOwner). Any other result, and every result for a single caller,
// is returned as it is.
func (s *session) sealBackendState(c *call, result json.RawMessage) (json.RawMessage, error) {
	if c.era != wire.PerRequestEra || !holdable(c.method) || !backends.InputRequired(result) {
		return result, nil
	}
	state := wire.Member(result, "requestState")
	who := s.f.stateOwner()
	if state == nil || who == "" {
		return result, nil
	}
	out, err := wire.SetMember(result, "requestState", mustJSON(s.f.g.sealer.sealBackend(who, c.method, c.name, state)))
	if err != nil {
		return nil, fmt.Errorf("seal the backend's requestState: %w", err)
	}
	return out, nil
}

// declares reports whether client capabilities caps declare what a
// server-to-client method needs.
func declares(caps json.RawMessage, method string) bool {
	switch method {
	case "sampling/createMessage":
		return present(wire.Member(caps, "sampling"))
	case "elicitation/create":
		return present(wire.Member(caps, "elicitation"))
	case "roots/list":
		return present(wire.Member(caps, "roots"))
	}
	return false
}
