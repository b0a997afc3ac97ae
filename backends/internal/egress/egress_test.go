package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"API.GitHub.com:443":   "api.github.com:443",
		"api.github.com.:443":  "api.github.com:443",
		"127.0.0.1:0080":       "127.0.0.1:80",
		"[::ffff:127.0.0.1]:8": "127.0.0.1:8",
		"[0:0::1]:443":         "[::1]:443",
	} {
		if got, err := Canonical(in); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"api.github.com", ":443", "h:0", "h:65536", "h:x"} {
		if got, err := Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", bad, got)
		}
	}
}

// origin serves its name and the Host it was asked for.
func origin(t *testing.T, name string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s host=%s uri=%s", name, r.Host, r.RequestURI)
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

func startProxy(t *testing.T, allow ...string) *Proxy {
	p, err := Start(allow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// raw sends one request as written and returns the status line and body.
func raw(t *testing.T, p *Proxy, req string) (string, string) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, string(b)
}

func TestProxyAdmitsOnlyTheList(t *testing.T) {
	allowed, other := origin(t, "allowed"), origin(t, "other")
	_, port, _ := net.SplitHostPort(allowed)
	p := startProxy(t, allowed, "LOCALHOST:"+port)
	u, _ := url.Parse("http://" + p.Addr())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	get := func(target string) (int, string) {
		resp, err := c.Get(target)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + allowed + "/a?b=c"); code != 200 || body != "allowed host="+allowed+" uri=/a?b=c" {
		t.Errorf("listed: %d %q", code, body)
	}
	if code, body := get("http://localhost:" + port + "/"); code != 200 || !strings.HasPrefix(body, "allowed host=localhost:"+port) {
		t.Errorf("listed name, in another case: %d %q", code, body)
	}
	if code, body := get("http://" + other + "/"); code != 403 || body != "egress proxy: "+other+" is not in this server's sandbox network list ("+allowed+", LOCALHOST:"+port+")\n" {
		t.Errorf("not listed: %d %q", code, body)
	}

	// The URI is what is checked, dialed and sent as Host: a Host header
	// naming another server changes nothing.
	if st, body := raw(t, p, "GET http://"+allowed+"/x HTTP/1.1\r\nHost: "+other+"\r\n\r\n"); st != "200 OK" || body != "allowed host="+allowed+" uri=/x" {
		t.Errorf("Host header: %s %q", st, body)
	}
	if st, _ := raw(t, p, "GET http://"+other+"/x HTTP/1.1\r\nHost: "+allowed+"\r\n\r\n"); st != "403 Forbidden" {
		t.Errorf("a Host header naming the listed one: %s", st)
	}
	for _, req := range []string{
		"GET /x HTTP/1.1\r\nHost: " + allowed + "\r\n\r\n",          // origin form: not a proxy request
		"GET https://" + allowed + "/x HTTP/1.1\r\nHost: x\r\n\r\n", // https goes through CONNECT
		"CONNECT " + strings.Split(allowed, ":")[0] + " HTTP/1.1\r\n\r\n",
	} {
		if st, _ := raw(t, p, req); !strings.HasPrefix(st, "400") && !strings.HasPrefix(st, "403") {
			t.Errorf("%q: %s", req, st)
		}
	}

	// CONNECT: a tunnel to the listed one, 403 to another.
	tunnel := func(target string) (string, string) {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET /t HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, target, target)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			return resp.Status, string(b)
		}
		resp, err = http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.Status, string(b)
	}
	if st, body := tunnel(allowed); st != "200 OK" || body != "allowed host="+allowed+" uri=/t" {
		t.Errorf("CONNECT listed: %s %q", st, body)
	}
	if st, _ := tunnel(other); st != "403 Forbidden" {
		t.Errorf("CONNECT not listed: %s", st)
	}
}

// TestProxyCloseEndsConnections: Close ends an open tunnel and a client
// that never sent its request, and returns once every goroutine has.
func TestProxyCloseEndsConnections(t *testing.T) {
	allowed := origin(t, "allowed")
	p, err := Start([]string{allowed})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	tun, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer tun.Close()
	fmt.Fprintf(tun, "CONNECT %s HTTP/1.1\r\n\r\n", allowed)
	br := bufio.NewReader(tun)
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []io.Reader{br, idle} {
		if n, err := io.Copy(io.Discard, r); err != nil || n != 0 {
			t.Errorf("after Close: %d bytes, %v; want EOF", n, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestTunnelHalfClose: a client that ends its sending (shutdown write)
// still gets the whole answer through the tunnel.
func TestTunnelHalfClose(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	served := make(chan struct{})
	go func() { // answers what it read, once the client has sent all
		defer close(served)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		c.Write(append([]byte("echo: "), b...))
	}()
	p := startProxy(t, l.Addr().String())
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\nhello", l.Addr())
	c.(*net.TCPConn).CloseWrite()
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	if b, err := io.ReadAll(br); err != nil || string(b) != "echo: hello" {
		t.Errorf("through the tunnel: %q, %v", b, err)
	}
	<-served
}

// TestProxyBoundsConnections: a server that opens connections and sends
// nothing (as many as it likes, through its children) holds at most
// maxConns of the gateway's descriptors: the next is answered 503 at
// once, and a closed one frees its place.
func TestProxyBoundsConnections(t *testing.T) {
	p := startProxy(t, origin(t, "allowed"))
	idle := make([]net.Conn, maxConns)
	for i := range idle {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle[i] = c
	}
	// The proxy accepts in the order of connecting: by the time it takes
	// this one, every idle one holds its place.
	if st, body := raw(t, p, ""); st != "503 Service Unavailable" || !strings.Contains(body, "too many connections") {
		t.Fatalf("one over the limit: %s %q", st, body)
	}
	idle[0].Close()
	// Its place is freed once the proxy has seen it close: until then
	// the answer is still 503.
	for {
		st, _ := raw(t, p, "GET http://nowhere.invalid:80/ HTTP/1.1\r\n\r\n")
		if st == "403 Forbidden" {
			break
		}
		if st != "503 Service Unavailable" {
			t.Fatalf("after closing one: %s", st)
		}
	}
}
