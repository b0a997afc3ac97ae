// Package egress is the loopback egress proxy of a sandboxed server whose
// network is a list of host:port (docs/sandbox.md): one proxy per server,
// on 127.0.0.1 and an ephemeral port, which the server reaches through
// HTTP_PROXY and HTTPS_PROXY and which the kernel (Landlock) makes the
// only TCP port it may connect to. It admits exactly the listed host:port
// pairs: CONNECT host:port is tunnelled, a plain-HTTP request in absolute
// form (GET http://host:port/path) is forwarded, anything else is refused
// with 403 naming the list.
//
// The proxy dials what the request names, as the request names it: a
// listed host name is resolved by the gateway, so the server cannot
// choose the address; an IP literal is admitted only when that literal
// (compared as an address: 127.0.0.1, ::1) is listed itself.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits of one client connection: its request head, the time it may
// take to send it, and the time a dial may take.
const (
	maxHead     = 64 << 10
	headTimeout = 30 * time.Second
	dialTimeout = 15 * time.Second
)

// maxConns bounds the client connections one proxy serves at once: each
// holds a descriptor of the gateway's (two with its upstream) and a
// goroutine, and a server that forks can open far more than its own
// open-files limit, enough to leave the gateway none. Beyond it a
// connection is answered 503 and closed. An npm install opens a few
// tens at once.
const maxConns = 256

// Proxy is one server's egress proxy. Close ends it and every connection
// it carries, and returns once all its goroutines have.
type Proxy struct {
	l     net.Listener
	allow map[string]bool // canonical host:port
	list  string          // the list as configured, for refusals

	ctx    context.Context // cancelled by Close: ends dials in flight
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// Start listens on 127.0.0.1 (an ephemeral port) and serves allow, a
// list of host:port as the configuration checked them.
func Start(allow []string) (*Proxy, error) {
	p := &Proxy{allow: map[string]bool{}, list: strings.Join(allow, ", "), conns: map[net.Conn]struct{}{}}
	for _, a := range allow {
		k, err := Canonical(a)
		if err != nil {
			return nil, fmt.Errorf("egress proxy: %w", err)
		}
		p.allow[k] = true
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	p.l = l
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.serve()
	}()
	return p, nil
}

// Addr is where the proxy listens: 127.0.0.1:PORT.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Port is the proxy's TCP port.
func (p *Proxy) Port() uint16 { return uint16(p.l.Addr().(*net.TCPAddr).Port) }

// Close stops listening, ends every connection and waits for the
// proxy's goroutines. It may be called more than once.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	err := p.l.Close()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// track adds c to the connections Close ends; false when the proxy is
// closing (c is closed then).
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) serve() {
	slots := make(chan struct{}, maxConns)
	for {
		c, err := p.l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		select {
		case slots <- struct{}{}:
		default:
			// A fresh socket's send buffer takes the answer at once; the
			// deadline keeps a client that never reads from holding the
			// accept loop regardless.
			c.SetWriteDeadline(time.Now().Add(time.Second))
			refuse(c, http.StatusServiceUnavailable, fmt.Sprintf("egress proxy: too many connections at once from this server (limit %d)\n", maxConns))
			c.Close()
			continue
		}
		if !p.track(c) {
			<-slots
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-slots }()
			defer p.untrack(c)
			p.handle(c)
		}()
	}
}

// limited reads at most n bytes while n >= 0 (the request head), then
// without limit (a tunnel's bytes).
type limited struct {
	r io.Reader
	n int64
}

func (l *limited) Read(b []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(b)
	}
	if l.n == 0 {
		return 0, errors.New("request head too large")
	}
	b = b[:min(int64(len(b)), l.n)]
	n, err := l.r.Read(b)
	l.n -= int64(n)
	return n, err
}

// handle serves one client connection: one request, then the tunnel or
// the forwarded response, then the connection is closed.
func (p *Proxy) handle(c net.Conn) {
	lr := &limited{r: c, n: maxHead}
	br := bufio.NewReader(lr)
	c.SetReadDeadline(time.Now().Add(headTimeout))
	req, err := http.ReadRequest(br)
	if err != nil {
		refuse(c, http.StatusBadRequest, "egress proxy: bad request\n")
		return
	}
	c.SetReadDeadline(time.Time{})
	lr.n = -1

	target, err := p.target(req)
	if err != nil {
		refuse(c, http.StatusBadRequest, "egress proxy: "+err.Error()+"\n")
		return
	}
	key, err := Canonical(target)
	if err != nil || !p.allow[key] {
		refuse(c, http.StatusForbidden, fmt.Sprintf("egress proxy: %s is not in this server's sandbox network list (%s)\n", target, p.list))
		return
	}
	up, err := (&net.Dialer{Timeout: dialTimeout}).DialContext(p.ctx, "tcp", target)
	if err != nil {
		refuse(c, http.StatusBadGateway, fmt.Sprintf("egress proxy: %s: %v\n", target, err))
		return
	}
	if !p.track(up) {
		return
	}
	defer p.untrack(up)

	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
			return
		}
		p.tunnel(c, br, up)
		return
	}
	p.forward(c, req, up)
}

// target is the host:port a request asks for: CONNECT's authority, or a
// plain-HTTP request's absolute URI (port 80 if it has none). The Host
// header is not consulted: the URI is what is checked and dialed.
func (p *Proxy) target(req *http.Request) (string, error) {
	if req.Method == http.MethodConnect {
		if req.URL == nil || req.URL.Host == "" || req.URL.Path != "" {
			return "", errors.New("CONNECT needs host:port")
		}
		return req.URL.Host, nil
	}
	if req.URL == nil || !req.URL.IsAbs() || req.URL.Host == "" {
		return "", errors.New("a proxy request needs an absolute http:// URI (or CONNECT host:port)")
	}
	if req.URL.Scheme != "http" {
		return "", fmt.Errorf("scheme %q: use CONNECT for anything but http", req.URL.Scheme)
	}
	host := req.URL.Host
	if req.URL.Port() == "" {
		host = net.JoinHostPort(strings.Trim(req.URL.Hostname(), "[]"), "80")
	}
	return host, nil
}

// tunnel copies bytes both ways: the client's end of sending is passed
// on (a half-close), and the upstream's end of sending ends both. br
// holds what the client sent after its CONNECT head.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(up, br)
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		} else {
			up.Close()
		}
	}()
	io.Copy(c, up)
	c.Close()
	up.Close()
	<-done
}

// forward sends req to up in origin form, with the URI's host as its
// Host, and returns the response to the client; both connections close
// after it (the proxy keeps no connection alive).
func (p *Proxy) forward(c net.Conn, req *http.Request, up net.Conn) {
	req.Host = req.URL.Host
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Header.Del("Expect") // the body is sent at once: no 100 Continue to relay
	req.Close = true
	if err := req.Write(up); err != nil {
		refuse(c, http.StatusBadGateway, fmt.Sprintf("egress proxy: %s: %v\n", req.URL.Host, err))
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), req)
	if err != nil {
		refuse(c, http.StatusBadGateway, fmt.Sprintf("egress proxy: %s: %v\n", req.URL.Host, err))
		return
	}
	defer resp.Body.Close()
	resp.Close = true
	resp.Write(c)
}

// refuse answers an error and nothing else.
func refuse(c net.Conn, code int, body string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

// Canonical is host:port as the proxy compares it: the host in lower
// case without a trailing dot, an IP address in its standard form, the
// port as a number 1..65535.
func Canonical(hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return "", fmt.Errorf("%q is not host:port", hostport)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", fmt.Errorf("%q: bad port", hostport)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.Unmap().String()
	} else {
		host = strings.TrimSuffix(strings.ToLower(host), ".")
	}
	return net.JoinHostPort(host, strconv.FormatUint(n, 10)), nil
}
