package main

import "encoding/json"

// A server that asks its client mid-request (-asks), in the handshake
// era's way (a request of its own): the prompt "ask" elicits a name
// (elicitation/create) and greets it; reading the resource test://sampled
// asks for a sampling (sampling/createMessage) and answers its text. The
// capabilities declare prompts and resources.

// Their entries of prompts/list and resources/list.
const (
	askPrompt     = `{"name":"ask","description":"Elicits a name, then greets it"}`
	sampledURI    = "test://sampled"
	sampledRecord = `{"uri":"test://sampled","name":"sampled"}`
)

// Spoken to in 2026-07-28 (-tasks-ext; the request's _meta names the
// version), they ask that era's way instead: the request is answered
// input_required, with the input request under key "ask" and
// askState as requestState, and the retry with the answer gets the same
// answer as above — if its requestState is askState byte for byte, else
// an error saying what came (-32602).

// askState is the requestState of a request of 2026-07-28 that asks: JSON
// that any re-encoding changes (an escape, HTML characters).
const askState = `"<asked \u00e9 & waiting>"`

// asking reports whether msg is a request the -asks server serves by
// asking the client first.
func (s *server) asking(msg message) bool {
	return s.asks && (msg.Method == "prompts/get" && stringMember(msg.Params, "name") == "ask" ||
		msg.Method == "resources/read" && stringMember(msg.Params, "uri") == sampledURI)
}

// serveAsking serves such a request: it asks the client, then answers
// with what the client said (its error, as an error). A cancelled request
// is not answered.
func (s *server) serveAsking(msg message) {
	cancel, done := s.cancellable(msg.ID)
	defer done()
	method, params := "elicitation/create", `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	if msg.Method == "resources/read" {
		method, params = "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"a word"}}],"maxTokens":10}`
	}
	var r message
	ok := true
	if stringMember(memberOf(msg.Params, "_meta"), "io.modelcontextprotocol/protocolVersion") == "2026-07-28" {
		r.Result = memberOf(memberOf(msg.Params, "inputResponses"), "ask")
		switch state := memberOf(msg.Params, "requestState"); {
		case r.Result == nil:
			s.reply(msg.ID, `{"resultType":"input_required","inputRequests":{"ask":{"method":`+quote(method)+`,"params":`+params+`}},"requestState":`+askState+`}`)
			return
		case string(state) != askState:
			s.replyError(msg.ID, -32602, "requestState is not ours: "+string(state), "")
			return
		}
	} else {
		r, ok = s.request(method, params, cancel)
	}
	switch {
	case !ok:
	case len(r.Error) > 0:
		s.replyError(msg.ID, -32603, "the client refused: "+string(r.Error), "")
	case msg.Method == "prompts/get":
		var res struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		json.Unmarshal(r.Result, &res)
		s.reply(msg.ID, `{"messages":[{"role":"user","content":{"type":"text","text":`+quote("hello "+res.Content.Name+" ("+res.Action+")")+`}}]}`)
	default:
		var res struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(r.Result, &res)
		s.reply(msg.ID, `{"contents":[{"uri":"test://sampled","text":`+quote(res.Content.Text)+`}]}`)
	}
}
