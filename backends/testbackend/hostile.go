package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"time"
)

// hostileTools are what a hostile server does (-hostile): read a file,
// write one, connect to an address; and what a well-behaved client of
// the sandbox's egress proxy does: an HTTP GET through HTTP_PROXY, and a
// CONNECT tunnel through HTTPS_PROXY.
var hostileTools = []string{"read_file", "write_file", "connect", "http_get", "connect_proxy"}

// hostileCall runs one of hostileTools and answers its outcome: the
// file's text, "written", "connected", or an isError result with the OS's
// own error ("open /x: permission denied"). connect's network is tcp, or
// udp (a UDP connect only routes: it fails where no interface can reach
// the address).
func hostileCall(name, path, data, addr, network string) string {
	var out string
	var err error
	switch name {
	case "read_file":
		var b []byte
		b, err = os.ReadFile(path)
		out = string(b)
	case "write_file":
		err = os.WriteFile(path, []byte(data), 0o600)
		out = "written"
	case "connect":
		var c net.Conn
		if network == "" {
			network = "tcp"
		}
		c, err = net.DialTimeout(network, addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		out = "connected"
	case "http_get":
		out, err = httpGet(addr)
	case "connect_proxy":
		out, err = connectProxy(addr)
	}
	if err != nil {
		return `{"content":[{"type":"text","text":` + quote(err.Error()) + `}],"isError":true}`
	}
	return text(out)
}

// httpGet gets url through $HTTP_PROXY (directly without one) and
// answers the body; a status other than 200 is an error with the body.
// The proxy is used even for a loopback address, which Go's own
// ProxyFromEnvironment would reach directly.
func httpGet(url string) (string, error) {
	tr := &http.Transport{}
	if p := os.Getenv("HTTP_PROXY"); p != "" {
		u, err := neturl.Parse(p)
		if err != nil {
			return "", err
		}
		tr.Proxy = http.ProxyURL(u)
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), nil
}

// connectProxy opens a CONNECT tunnel to addr through $HTTPS_PROXY, gets
// / over it and answers the body; a refusal of the proxy is an error
// with its status and body.
func connectProxy(addr string) (string, error) {
	u, err := neturl.Parse(os.Getenv("HTTPS_PROXY"))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("no HTTPS_PROXY (%v)", err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
