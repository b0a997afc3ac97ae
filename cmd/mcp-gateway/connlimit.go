package main

import (
	"bytes"
	"fmt"
	"net"
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

// limitListener accepts at most limit connections open at once. Past it,
// a connection is accepted, answered 503 with a body that names the limit,
// and closed, so that a client learns why instead of waiting in the
// kernel's queue; at most maxRefusing are answered at a time (each takes
// at most refuseLinger), and Accept waits for one of them to end before it
// takes the next. Accept's own errors (EMFILE included) are returned as
// they are: http.Server backs off on them.
type limitListener struct {
	net.Listener
	limit    int64
	open     atomic.Int64
	refusing chan struct{} // one per connection being refused
	refused  func()        // called for each connection refused (a warning, rate-limited by the caller)
}

func newLimitListener(l net.Listener, limit int, refused func()) *limitListener {
	return &limitListener{Listener: l, limit: int64(limit), refusing: make(chan struct{}, maxRefusing), refused: refused}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.limit {
			return &limitConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		if l.refused != nil {
			l.refused()
		}
		l.refusing <- struct{}{}
		go func() {
			defer func() { <-l.refusing }()
			refuse(c, l.limit)
		}()
	}
}

// refuse answers c 503 and closes it: once its request's head has come
// (or refuseWait has passed), the answer is written, the rest of the
// request read (and dropped) for a moment so that closing does not reset
// the answer away, and the connection closed.
func refuse(c net.Conn, limit int64) {
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
	body := fmt.Sprintf("Service Unavailable: the gateway serves at most %d connections at once (gateway.http.max_connections); try again when one closes\n", limit)
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

// limitConn gives its slot back when it is closed (once).
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
