package backends

import (
	"reflect"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// Changes says what Apply did, by server name.
type Changes struct {
	Added, Removed, Restarted []string
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Restarted) == 0 }

// Apply makes the backends match servers (a new configuration): a server
// not running yet is started, one no longer configured is stopped (its
// process tree killed and reaped), one whose entry changed is stopped and
// started again, and one whose entry is the same is not touched (same
// process, calls in flight undisturbed). The backends take the order of
// servers. Hooks.Changed is called for every server added, removed or
// restarted. Apply returns when the stopped backends are gone; concurrent
// Applies run one after the other. Before Start it only records servers;
// after Close it does nothing.
func (m *Manager) Apply(servers []config.Server) Changes {
	m.applyMu.Lock()
	defer m.applyMu.Unlock()

	var ch Changes
	// The secrets' current values, read before taking the lock: a
	// keychain may be slow to answer.
	digests := map[string]string{}
	for _, s := range servers {
		if s.SecretNames() != nil {
			_, _, digests[s.Name] = m.lookupSecrets(s)
		}
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ch
	}
	old := m.set.Load()
	next := &backendSet{byName: make(map[string]*backend, len(servers))}
	var stale []*backend // to stop: removed or replaced
	for _, s := range servers {
		if b := old.byName[s.Name]; b != nil && sameEntry(b.cfg, s) && !b.secretsChanged(digests[s.Name]) {
			next.add(b)
			continue
		}
		if b := old.byName[s.Name]; b != nil {
			stale = append(stale, b)
			ch.Restarted = append(ch.Restarted, s.Name)
		} else {
			ch.Added = append(ch.Added, s.Name)
		}
		next.add(m.newBackend(s))
	}
	for _, b := range old.list {
		if next.byName[b.cfg.Name] == nil {
			stale = append(stale, b)
			ch.Removed = append(ch.Removed, b.cfg.Name)
		}
	}
	started, notify := m.started, m.notify
	// The new set is visible before anything stops, so that no call or
	// list reaches a backend on its way out.
	m.set.Store(next)
	if started {
		for _, b := range stale {
			if b.stop != nil {
				b.stop()
			}
		}
	}
	m.mu.Unlock()

	if started {
		for _, b := range stale {
			<-b.done
			b.settle()
		}
		m.mu.Lock()
		if !m.closed {
			for _, b := range next.list {
				if old.byName[b.cfg.Name] != b {
					m.startLocked(b)
				}
			}
		}
		m.mu.Unlock()
	}
	for _, names := range [][]string{ch.Removed, ch.Restarted, ch.Added} {
		for _, name := range names {
			notify.changed(name)
		}
	}
	return ch
}

// sameEntry reports whether a and b configure the same server. Where the
// entry sits in the file (Source) is not part of it: an edit above it that
// moves it down a line must not restart it.
func sameEntry(a, b config.Server) bool {
	a.Source, b.Source = "", ""
	return reflect.DeepEqual(a, b)
}
