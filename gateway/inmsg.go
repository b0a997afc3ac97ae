package gateway

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
)

// A client's message is decoded once, by whoever reads it first — the
// session's transport, or the HTTP front, which looks into a POST before
// the session serves it (its era, its headers, its scopes, its trace
// context) — and what was read of it travels with it to the session and
// the call path: the envelope, and of a request its params' members, its
// _meta, the version that names its era, and the name Mcp-Name carries.
// The front's checks, the session and the call path are given the decoded
// message, never the bytes: none of them decodes the envelope again, and
// what is carried is read from it. Members nobody carries (a prompt's
// arguments, an initialize's protocolVersion) are read from the params
// where they are needed; the legacy SSE transport (2024-11-05) is go-sdk's,
// which decodes the body itself.

// inMsg is one message from a client, decoded (readMsg). Its raw members
// point into the bytes it was read from.
type inMsg struct {
	wire.Message
	// bad, if not nil, says why the input is no JSON-RPC message
	// (answered -32700 or -32600); Message is then empty.
	bad *wire.DecodeError
	// Of a request (IsCall): its params' members in order (paramList; none
	// when the params are no object: object false) — the first ones held
	// in inline, all of them in spill once there are more, so that a
	// request's members cost no allocation — params._meta, and its protocol
	// version if it is a string ("" otherwise), which says the request's
	// era (versions.go); name is the member Mcp-Name carries
	// (wire.NameMember), nameOK when it is a string.
	nparams int
	inline  [4]member // a tools/call has 3: _meta, name, arguments
	spill   []member
	object  bool
	meta    json.RawMessage
	version string
	name    string
	nameOK  bool
	// ambiguous, if not nil, is a member of the request's params (or a
	// notification's) that two decoders could read differently
	// (wire.Ambiguous): the session refuses the request (-32602) before it
	// serves it. The rest is read as usual, so that the front's checks of
	// its era and headers answer as for any request. An envelope member
	// that is ambiguous makes the message bad (-32600).
	ambiguous *wire.Ambiguity
}

// member is one member of a request's params.
type member struct {
	name  string
	value json.RawMessage
}

// readMsg decodes one message from a client; input that is no message
// comes back with bad set.
func readMsg(body []byte) inMsg {
	m, err := wire.Decode(body)
	if err != nil {
		var de *wire.DecodeError
		if !errors.As(err, &de) {
			de = &wire.DecodeError{Reason: err.Error()}
		}
		return inMsg{bad: de}
	}
	known := &responseMembers
	if m.HasMethod {
		known = &requestMembers
	}
	in := inMsg{Message: m}
	if in.ambiguous = wire.Ambiguous(body, known); in.ambiguous != nil && (in.ambiguous.Path == "" || !m.HasMethod) {
		// In the envelope (or a response): no JSON-RPC message, refused
		// as any other, by every front before anything reads it.
		de := &wire.DecodeError{Reason: in.ambiguous.Error()}
		if wire.ValidID(m.ID) {
			de.ID = m.ID
		}
		return inMsg{bad: de}
	}
	if m.IsCall() {
		in.object = in.EachParam(func(name string, v json.RawMessage) {
			in.addParam(member{name, v})
		})
		in.readMeta()
	}
	return in
}

// The members the gateway reads in a client's message, for wire.Ambiguous:
// one of these given in another case is refused, and so, anywhere in a
// request's params (a tool's arguments too: lazy mode's call tools read
// them, and policy, audit and Mcp-Param headers describe the call by them),
// are two members of one object that differ only in case or not at all.
// A response's result is the client's own answer, read by nobody but the
// backend that asked: only its envelope is checked.
var (
	requestMembers = wire.Known{
		Names:   []string{"jsonrpc", "id", "method", "params", "result", "error"},
		Members: map[string]*wire.Known{"params": &paramsMembers},
	}
	responseMembers = wire.Known{
		Names:   []string{"jsonrpc", "id", "method", "params", "result", "error"},
		Shallow: true,
	}
	paramsMembers = wire.Known{
		Names: []string{"name", "arguments", "_meta", "uri", "cursor", "ref", "argument", "context",
			"level", "requestState", "inputResponses", "task", "taskId", "requestId", "reason",
			"protocolVersion", "capabilities", "clientInfo"},
		Members: map[string]*wire.Known{
			"_meta": {Names: []string{"progressToken", metaTraceparent, metaTracestate,
				metaProtocolVersion, metaClientCaps, metaClientInfo, metaLogLevel, metaSubscriptionID}},
			"task": {Names: []string{"ttl"}},
		},
	}
)

// readMeta reads what depends on the request's params' members.
func (in *inMsg) readMeta() {
	in.meta = in.param("_meta")
	in.version, _ = wire.Unquote(wire.Member(in.meta, metaProtocolVersion))
	if member := wire.NameMember(in.Method); member != "" {
		in.name, in.nameOK = wire.Unquote(in.param(member))
	}
}

// unreadable is input a transport could not read as JSON at all, and why
// (answered -32700).
func unreadable(reason string) inMsg {
	return inMsg{bad: &wire.DecodeError{Parse: true, Reason: reason}}
}

// paramList is the request's params' members in order. It points into in:
// read it while in is not changed.
func (in *inMsg) paramList() []member {
	if in.spill != nil {
		return in.spill
	}
	return in.inline[:in.nparams]
}

// addParam appends a member to the request's params' members.
func (in *inMsg) addParam(m member) {
	switch {
	case in.spill != nil:
		in.spill = append(in.spill, m)
	case in.nparams < len(in.inline):
		in.inline[in.nparams] = m
		in.nparams++
	default:
		in.spill = append(append(make([]member, 0, 2*len(in.inline)), in.inline[:]...), m)
	}
}

// param is the value of a request's params member name (the last one, if
// repeated, as wire.Member reads it), or nil.
func (in *inMsg) param(name string) json.RawMessage {
	params := in.paramList()
	for i := len(params) - 1; i >= 0; i-- {
		if params[i].name == name {
			return params[i].value
		}
	}
	return nil
}

// setMeta replaces the request's params by params, which are its params
// with _meta set to meta (wire.SetMember: in its place, later duplicates
// gone, appended when there was none), as the HTTP front adds the trace
// context of its headers (trace.go).
func (in *inMsg) setMeta(params, meta json.RawMessage) {
	old, done := slices.Clone(in.paramList()), false
	in.nparams, in.spill = 0, nil
	for _, m := range old {
		if m.name == "_meta" {
			if done {
				continue
			}
			m.value, done = meta, true
		}
		in.addParam(m)
	}
	if !done {
		in.addParam(member{"_meta", meta})
	}
	in.Params, in.object = params, true
	in.readMeta()
}
