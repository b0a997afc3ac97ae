package backends

import "time"

// SetTimings shortens a Manager's supervision delays for tests: restart
// backoff (base doubling to max), the crash window, and Close's grace.
func SetTimings(m *Manager, backoffBase, backoffMax, crashWindow, stopGrace time.Duration) {
	m.backoffBase, m.backoffMax, m.crashWindow, m.stopGrace = backoffBase, backoffMax, crashWindow, stopGrace
}
