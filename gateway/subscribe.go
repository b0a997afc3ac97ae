package gateway

import (
	"context"
	"encoding/json"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
)

// Resource subscriptions: the gateway forwards resources/subscribe and
// unsubscribe (or a subscriptions/listen's resources, listen.go) to the
// backend that lists the URI (or, for one no backend lists, to every
// backend that declared resources), and a backend's
// notifications/resources/updated, as the backend wrote it, to the clients
// subscribed to that URI. Each front records its subscriptions before it
// forwards the request: a backend may report an update right after it
// answers.

// subscribe records the client's subscription to uri and forwards it.
func (f *front) subscribe(ctx context.Context, uri string) error {
	f.mu.Lock()
	if f.subs == nil {
		f.subs = make(map[string]bool)
	}
	f.subs[uri] = true
	f.mu.Unlock()
	err := f.forwardSubscription(ctx, "resources/subscribe", uri)
	if err != nil {
		f.mu.Lock()
		delete(f.subs, uri)
		f.mu.Unlock()
	}
	return err
}

// unsubscribe forgets the client's subscription to uri and forwards that.
func (f *front) unsubscribe(ctx context.Context, uri string) error {
	f.mu.Lock()
	delete(f.subs, uri)
	f.mu.Unlock()
	return f.forwardSubscription(ctx, "resources/unsubscribe", uri)
}

func (f *front) subscribed(uri string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.subs[uri]
}

// forwardSubscription sends method for uri to the backends that may serve
// it; it succeeds if one of them accepted.
func (f *front) forwardSubscription(ctx context.Context, method, uri string) error {
	b := f.g.opts.Backends
	f.rebuild(ctx, settled)
	route, listed, err := f.resourceRoute(uri)
	if err != nil {
		return called(kindResource, uri, err)
	}
	servers := []string{route.server}
	if !listed {
		servers = b.Declaring("resources")
		route.own = uri
		if f.hidden(policy.Resource, uri) {
			servers = nil
		}
	}
	params := map[string]string{"uri": route.own}
	var lastErr error = &notFoundError{kindResource, uri}
	accepted := false
	for _, server := range servers {
		if !f.allowsResources(server) {
			continue
		}
		if _, err := b.Request(ctx, server, method, params, backends.CallOptions{Caller: f.upstream()}); err != nil {
			lastErr = err
			continue
		}
		accepted = true
	}
	if !accepted {
		return called(kindResource, uri, lastErr)
	}
	return nil
}

// backendNotification passes on a backend's notifications that concern
// the clients (backends.Hooks.Notification): log messages
// (BackendLog), resource updates, which go to the clients subscribed to
// the URI, and task statuses, which go to the clients that have the task.
func (g *Gateway) backendNotification(server, method string, params json.RawMessage) {
	switch method {
	case "notifications/message":
		g.BackendLog(server, params)
	case "notifications/tasks/status":
		compact, err := wire.Compact(params)
		id, ok := wire.Unquote(wire.Member(compact, "taskId"))
		if err != nil || !ok {
			g.log.Debug("dropped a task status", "server", server, "err", err)
			return
		}
		st := stateOf(compact)
		g.tasks.update(id, server, st)
		g.broadcast(wire.AppendRequest(nil, nil, method, compact), func(f *front) bool {
			if !f.ownsTask(id, server) {
				return false
			}
			f.tasks.update(id, server, st)
			return true
		})
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		compact, err := wire.Compact(params)
		if err == nil {
			err = json.Unmarshal(compact, &p)
		}
		if err != nil || p.URI == "" {
			g.log.Debug("dropped a resource update", "server", server, "err", err)
			return
		}
		if front, ok := uiFront(server, p.URI); ok {
			// The URI its subscribers know (resources.go).
			p.URI = front
			quoted, _ := json.Marshal(front)
			compact, _ = wire.SetMember(compact, "uri", quoted)
		}
		g.broadcast(wire.AppendRequest(nil, nil, method, compact), func(f *front) bool {
			if !f.allowsResources(server) {
				return false // a server whose resources the policy hides from the client
			}
			for _, l := range f.listensOf(p.URI) {
				l.send(method, compact)
			}
			return f.subscribed(p.URI) && !f.isSessionless()
		})
	}
}

// broadcast buffers msg for every served client that to picks. It is
// called from a backend's read loop, which flushes when idle.
func (g *Gateway) broadcast(msg []byte, to func(*front) bool) {
	for _, f := range g.frontList() {
		g.mu.Lock()
		st := f.stream
		g.mu.Unlock()
		if st != nil && to(f) {
			_ = st.Send(outMsg{msg: msg, hold: true})
		}
	}
}
