package backends

import "encoding/json"

// Each caller's own lists (docs/teams.md, "Each person's own credentials
// upstream"): a server reached per caller lists what its caller's own
// session lists — a person may be shown tools another may not use — so
// the lists a client is shown are the lists For its caller: every other
// server's, shared by everyone, with each per-caller server's replaced by
// that caller's session's (none while the caller has no session ready,
// and none for nobody: a request without a caller is refused by such a
// server anyway). Such a list is private in the cache hints of
// 2026-07-28. A server shared by everyone costs one comparison more.

// ToolsFor returns the tools caller c is shown (c nil: nobody in
// particular), in configuration order and then each backend's own order.
// The Raw bytes are shared: don't modify them.
func (m *Manager) ToolsFor(c *Caller) []Tool {
	return readyLists(m, c, func(l *lists, _ bool) []Tool { return l.tools })
}

// PromptsFor returns the prompts caller c is shown (ToolsFor).
func (m *Manager) PromptsFor(c *Caller) []Prompt {
	return readyLists(m, c, func(l *lists, _ bool) []Prompt { return l.prompts })
}

// ResourcesFor returns the resources and resource templates caller c is
// shown (ToolsFor).
func (m *Manager) ResourcesFor(c *Caller) []Resource {
	return readyLists(m, c, func(l *lists, _ bool) []Resource { return l.resources })
}

// ListMetaFor is ListMeta of the lists caller c is shown (ToolsFor).
func (m *Manager) ListMetaFor(method string, c *Caller) []json.RawMessage {
	return readyLists(m, c, func(l *lists, _ bool) []json.RawMessage {
		if v, ok := l.meta[method]; ok {
			return []json.RawMessage{v}
		}
		return nil
	})
}

// ListHintsFor is ListHints of the lists caller c is shown (ToolsFor): a
// per-caller server's is private, whoever asks, its lists depending on
// who does; one that shows c nothing (yet) counts, as private and stale
// at once, since c's session may list something any time.
func (m *Manager) ListHintsFor(method string, c *Caller) []CacheHint {
	return readyLists(m, c, func(l *lists, perCaller bool) []CacheHint {
		h := l.hints[method]
		h.Private = h.Private || perCaller
		return []CacheHint{h}
	})
}

// PerCaller reports whether some server is reached per caller, so that
// the lists differ by caller (ToolsFor).
func (m *Manager) PerCaller() bool { return m.set.Load().perCaller }

// PerCallerServer reports whether server is reached per caller.
func (m *Manager) PerCallerServer(server string) bool {
	b := m.set.Load().byName[server]
	return b != nil && b.pool != nil
}

// noLists are the lists of a per-caller server that shows its caller
// nothing; never written.
var noLists lists

// readyLists concatenates one list of every backend caller c is shown:
// the ready ones, those in their first start that have a snapshot
// (snapshot.go), and, of a server reached per caller, c's own session
// (perCaller; noLists when it shows c nothing).
func readyLists[T any](m *Manager, c *Caller, list func(l *lists, perCaller bool) []T) []T {
	var out []T
	for _, b := range m.backends() {
		if b.pool != nil {
			out = append(out, callerList(b, c, list)...)
			continue
		}
		b.mu.Lock()
		if sf := b.shownLocked(); sf != nil {
			out = append(out, list(b.shownListsLocked(sf), false)...)
		}
		b.mu.Unlock()
	}
	return out
}

// callerList is one list of per-caller server b as c is shown it: that of
// c's own session, when it is ready.
func callerList[T any](b *backend, c *Caller, list func(l *lists, perCaller bool) []T) []T {
	if !b.cfg.Enabled || b.skipped || b.pool.err != nil {
		return nil // shown to nobody, as any server that cannot start
	}
	cb := b.pool.session(c)
	if cb == nil {
		return list(&noLists, true)
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if sf := cb.shownLocked(); sf != nil {
		return list(cb.shownListsLocked(sf), true)
	}
	return list(&noLists, true)
}

// session is c's session of the pool's server, whatever its state; nil
// for nobody, or a caller who has none. It does not count as a use: a
// list shown keeps no session open.
func (p *callerPool) session(c *Caller) *backend {
	if c == nil || c.Subject == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.byKey[c.Subject]; e != nil {
		return e.Value.(*callerSession).b
	}
	return nil
}

// listsChanged tells the clients that b's lists changed: everyone's, or,
// for a caller's own session, only its caller's (Hooks.CallerChanged).
func (b *backend) listsChanged() {
	if b.parent != nil {
		b.m.notify.callerChanged(b.cfg.Name, b.caller)
		return
	}
	b.m.notify.changed(b.cfg.Name)
}
