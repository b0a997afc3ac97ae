package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The HTTP listener's connection limit (docs/http.md, "Limits"): every
// connection holds a file descriptor, and so does every pipe of every
// backend. Without a limit, connections nobody finishes (a flood, or a
// client that leaks them) took every descriptor: accept failed, /healthz
// hung, and backends could not be started. The limit keeps descriptors for
// the backends; past it a connection is answered 503 and closed.

const (
	// maxDerivedConnections caps the limit derived from the open-file
	// limit: far more than max_sessions and max_streams need.
	maxDerivedConnections = 4096
	// fdReserve is kept out of the derived limit for the gateway's own
	// files (log, configuration, its watcher) and the refusals in flight.
	fdReserve = 32
	// maxRefusing bounds the connections being answered 503 at once;
	// the next waits (in the kernel's queue) for one of them to end.
	maxRefusing = 64
	// refuseWait bounds how long a refused connection's request head is
	// waited for (a client reads an answer only after it has sent its
	// request), and refuseLinger how long it is read from after the
	// answer, so that closing it does not reset the answer away.
	refuseWait   = 250 * time.Millisecond
	refuseLinger = 100 * time.Millisecond
)

// connectionLimit is the number of HTTP connections the gateway serves at
// once: configured (gateway.http.max_connections), or else half of what
// the open-file limit leaves beyond fdReserve (the other half is the
// backends'), at most maxDerivedConnections; without an open-file limit
// (Windows), maxDerivedConnections. warn says why a configured limit may
// not leave the backends their descriptors.
func connectionLimit(configured int, fileLimit uint64) (limit int, warn string) {
	derived := maxDerivedConnections
	if fileLimit > 0 {
		derived = int(min(max(int64(fileLimit/2)-fdReserve, 1), maxDerivedConnections))
	}
	if configured <= 0 {
		return derived, ""
	}
	if fileLimit > 0 && uint64(configured) > fileLimit/2 {
		warn = fmt.Sprintf("gateway.http.max_connections (%d) leaves the backends few of the %d file descriptors the gateway may open (ulimit -n); a flood of connections could keep backends from starting", configured, fileLimit)
	}
	return configured, warn
}

// connectionsPerSource is the number of connections one client address
// may hold: configured (gateway.http.max_connections_per_source), or else
// half of the connection limit, so that one address cannot take them all.
func connectionsPerSource(configured, limit int) int {
	if configured > 0 {
		return configured
	}
	return max(1, limit/2)
}

// limitListener accepts at most limit connections open at once, and at
// most perSource from one client address. At a limit, an idle connection
// — one waiting for a request head: a keep-alive one between requests
// (http.Server.ConnState says so), or a new one that has not sent a whole
// head yet (slowloris sends half of one and waits) — is closed to make
// room: the one waiting longest, of that address for its limit — so that
// connections nobody uses cannot shut out callers. When
// none is idle, the new connection is accepted, answered 503 with a body
// that names the limit, and closed, so that a client learns why instead
// of waiting in the kernel's queue; at most maxRefusing are answered at a
// time (each takes at most refuseLinger), and Accept waits for one of
// them to end before it takes the next. Accept's own errors (EMFILE
// included) are returned as they are: http.Server backs off on them.
type limitListener struct {
	net.Listener
	limit     int
	perSource int
	refusing  chan struct{} // one per connection being refused
	refused   func()        // called for each connection refused (a warning, rate-limited by the caller)

	mu       sync.Mutex
	open     map[*limitConn]struct{}
	bySource map[string]int
}

func newLimitListener(l net.Listener, limit, perSource int, refused func()) *limitListener {
	return &limitListener{Listener: l, limit: limit, perSource: perSource, refusing: make(chan struct{}, maxRefusing), refused: refused,
		open: make(map[*limitConn]struct{}), bySource: make(map[string]int)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitConn{Conn: c, l: l, source: sourceOf(c.RemoteAddr())}
		lc.idleSince.Store(time.Now().UnixNano()) // no request yet
		evicted, refusal := l.admit(lc)
		for _, e := range evicted {
			// Its server goroutine, reading for a next request, sees the
			// connection closed and ends.
			e.Conn.Close()
		}
		if refusal == "" {
			return lc, nil
		}
		if l.refused != nil {
			l.refused()
		}
		l.refusing <- struct{}{}
		go func() {
			defer func() { <-l.refusing }()
			refuse(c, refusal)
		}()
	}
}

// admit counts c among the open connections, after taking the idle
// connections it needs out of the count (evicted: the caller closes them);
// or it returns why c is refused.
func (l *limitListener) admit(c *limitConn) (evicted []*limitConn, refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bySource[c.source] >= l.perSource {
		e := l.idlestLocked(c.source)
		if e == nil {
			return nil, fmt.Sprintf("the gateway serves at most %d connections at once from one address or IPv6 /64 (gateway.http.max_connections_per_source); close idle ones, or try again when one closes", l.perSource)
		}
		l.removeLocked(e)
		evicted = append(evicted, e)
	}
	if len(l.open) >= l.limit {
		e := l.idlestLocked("")
		if e == nil { // (then none was evicted above: that made room)
			return nil, fmt.Sprintf("the gateway serves at most %d connections at once (gateway.http.max_connections); try again when one closes", l.limit)
		}
		l.removeLocked(e)
		evicted = append(evicted, e)
	}
	l.open[c] = struct{}{}
	l.bySource[c.source]++
	return evicted, ""
}

// idlestLocked is the connection idle longest (of source, if not ""), or
// nil when none is idle. l.mu is held.
func (l *limitListener) idlestLocked(source string) *limitConn {
	var idlest *limitConn
	var since int64
	for c := range l.open {
		t := c.idleSince.Load()
		if t == 0 || source != "" && c.source != source {
			continue
		}
		if idlest == nil || t < since {
			idlest, since = c, t
		}
	}
	return idlest
}

// removeLocked gives c's slot back, once. l.mu is held.
func (l *limitListener) removeLocked(c *limitConn) {
	if _, ok := l.open[c]; !ok {
		return
	}
	delete(l.open, c)
	if l.bySource[c.source]--; l.bySource[c.source] <= 0 {
		delete(l.bySource, c.source)
	}
}

// connCounts is how many connections are open, and how many of them idle:
// waiting for a request head (GET /status).
type connCounts struct {
	Open int `json:"open"`
	Idle int `json:"idle"`
}

func (l *limitListener) counts() connCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := connCounts{Open: len(l.open)}
	for c := range l.open {
		if c.idleSince.Load() != 0 {
			n.Idle++
		}
	}
	return n
}

// connState is the server's http.Server.ConnState: it tells which
// connections are idle.
func (l *limitListener) connState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	switch state {
	case http.StateIdle:
		lc.idleSince.Store(time.Now().UnixNano())
	case http.StateActive, http.StateHijacked:
		lc.idleSince.Store(0)
	}
}

// sourceOf is a connection's client address, without its port; for IPv6,
// its /64 network: one subscriber's (RFC 6177), every address of which an
// attacker could connect from, as an IPv4 network behind NAT connects from
// one address.
func sourceOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		if ta.IP.To4() == nil && len(ta.IP) == net.IPv6len {
			return ta.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
		}
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// refuse answers c 503 (why: the body) and closes it: once its request's
// head has come (or refuseWait has passed), the answer is written, the
// rest of the request read (and dropped) for a moment so that closing does
// not reset the answer away, and the connection closed.
func refuse(c net.Conn, why string) {
	defer c.Close()
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(refuseWait))
	for n := 0; n < len(buf); {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil || bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
			break
		}
	}
	body := "Service Unavailable: " + why + "\n"
	c.SetDeadline(time.Now().Add(refuseLinger))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// limitConn gives its slot back when it is closed.
type limitConn struct {
	net.Conn
	l      *limitListener
	source string
	// idleSince is since when the connection has waited for a request
	// head (unix nanoseconds): from its accept, and from the end of each
	// request; 0 while a request is in flight.
	idleSince atomic.Int64
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.removeLocked(c)
	c.l.mu.Unlock()
	return err
}
