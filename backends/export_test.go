package backends

import "time"

// The package's constants its tests compare with.
const (
	ProtocolVersion = protocolVersion
	MaxInputRounds  = maxInputRounds
)

// SetTimings shortens a Manager's supervision delays for tests: restart
// backoff (base doubling to max), the crash window, and Close's grace.
func SetTimings(m *Manager, backoffBase, backoffMax, crashWindow, stopGrace time.Duration) {
	m.backoffBase, m.backoffMax, m.crashWindow, m.stopGrace = backoffBase, backoffMax, crashWindow, stopGrace
}

// SetClock sets the clock callers' credentials expire by (upstream.go),
// before any caller's first request.
func SetClock(m *Manager, now func() time.Time) { m.now = now }

// InFlight is the number of calls to server awaiting the backend's
// response: a test's sync point for "the call has been sent".
func InFlight(m *Manager, server string) int {
	b := m.set.Load().byName[server]
	if b == nil {
		return 0
	}
	c, err := b.readyConn()
	if err != nil {
		return 0
	}
	return c.InFlight()
}
