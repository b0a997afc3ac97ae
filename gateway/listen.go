package gateway

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscriptions/listen is how a client of the per-request era hears of
// changes: one long-lived request that names what it wants — list changes
// of tools, prompts, resources, and updates of given resources — answered
// first by notifications/subscriptions/acknowledged with what the gateway
// will send, then by those notifications as they happen, each tagged with
// the request's id (_meta subscriptionId) and sent on the request's own
// stream; it ends when the client cancels it, or with a result when the
// gateway ends it (the session closes). The gateway declares every list
// with listChanged and resources with subscribe, so it honours every kind
// asked for.

// listen is one subscriptions/listen in flight.
type listen struct {
	s     *session
	id    json.RawMessage // the request's id, exactly as the client wrote it
	lists [3]bool         // list changes asked for
	uris  []string        // resources whose updates were asked for
}

// listen serves subscriptions/listen.
func (s *session) listen(m *inMsg) {
	params := m.Params
	c, ok := s.claim(m, reqMeta{era: wire.PerRequestEra}) // only that era has the method (refuse)
	if !ok {
		return
	}
	var p struct {
		Notifications *mcp.NotificationSubscriptions `json:"notifications"`
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		s.respond(c, nil, errInvalidParams(decodeReason(err.Error())))
		return
	}
	if p.Notifications == nil {
		s.respond(c, nil, errInvalidParams(`missing required "notifications" member`))
		return
	}
	n := *p.Notifications
	n.ResourceSubscriptions = slices.Compact(slices.Sorted(slices.Values(n.ResourceSubscriptions)))
	l := &listen{s: s, id: c.id, uris: n.ResourceSubscriptions}
	l.lists[toolsList], l.lists[promptsList], l.lists[resourcesList] = n.ToolsListChanged, n.PromptsListChanged, n.ResourcesListChanged
	idMeta, _ := json.Marshal(map[string]json.RawMessage{metaSubscriptionID: c.id})
	ack, _ := json.Marshal(struct {
		Meta          json.RawMessage               `json:"_meta"`
		Notifications mcp.NotificationSubscriptions `json:"notifications"`
	}{idMeta, n})
	end := func() {
		s.respond(c, s.f.result(json.RawMessage(`{"_meta":`+string(idMeta)+`}`), c.era), nil)
	}
	if !l.lists[toolsList] && !l.lists[promptsList] && !l.lists[resourcesList] && len(l.uris) == 0 {
		_ = s.s.send(c.id, wire.AppendRequest(nil, nil, "notifications/subscriptions/acknowledged", ack), false, false)
		end()
		return
	}
	ctx, cancel := s.callContext(nil)
	if !s.spawn(func() {
		defer cancel(nil)
		f := s.f
		f.rebuild(ctx, ifNone)
		for _, uri := range l.uris {
			if err := f.subscribe(ctx, uri); err != nil {
				s.log.Debug("a listen's resource subscription failed", "uri", uri, "err", err)
			}
		}
		f.mu.Lock()
		if f.listens == nil {
			f.listens = make(map[string]*listen)
		}
		f.listens[string(c.id)] = l
		f.mu.Unlock()
		_ = s.s.send(c.id, wire.AppendRequest(nil, nil, "notifications/subscriptions/acknowledged", ack), false, false)
		<-ctx.Done() // the client cancelled it, or the session closes
		f.mu.Lock()
		delete(f.listens, string(c.id))
		f.mu.Unlock()
		for _, uri := range l.uris {
			_ = f.unsubscribe(context.WithoutCancel(ctx), uri)
		}
		end() // dropped if the client cancelled it
	}) {
		cancel(nil)
		end()
		return
	}
	s.setCancel(c, cancel, "", "")
}

// send sends a notification of method on the listen's stream, tagged with
// its id; params (an object, or nil) are the notification's own.
func (l *listen) send(method string, params json.RawMessage) {
	if params == nil {
		params = json.RawMessage(`{}`)
	}
	meta := wire.Member(params, "_meta")
	if meta == nil || string(meta) == "null" {
		meta = json.RawMessage(`{}`)
	}
	meta, _ = wire.SetMember(meta, metaSubscriptionID, l.id)
	if p, err := wire.SetMember(params, "_meta", meta); err == nil {
		params = p
	}
	if err := l.s.s.send(l.id, wire.AppendRequest(nil, nil, method, params), false, false); err != nil {
		l.s.log.Debug("write a listen's notification", "err", err)
	}
}

// listensFor returns the listens that asked for changes of list; f.mu is
// held.
func (f *front) listensFor(list int) []*listen {
	var out []*listen
	for _, l := range f.listens {
		if l.lists[list] {
			out = append(out, l)
		}
	}
	return out
}

// listensOf returns the listens that asked for updates of uri.
func (f *front) listensOf(uri string) []*listen {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*listen
	for _, l := range f.listens {
		if slices.Contains(l.uris, uri) {
			out = append(out, l)
		}
	}
	return out
}

// notify writes a notification that belongs to no request.
func (s *session) notify(method string, params json.RawMessage) {
	if err := s.s.send(nil, wire.AppendRequest(nil, nil, method, params), false, false); err != nil {
		s.log.Debug("write a notification", "method", method, "err", err)
	}
}
