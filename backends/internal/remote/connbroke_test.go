package remote

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// connectionBroke tells a request whose connection was cut (the server
// closed it without an answer) from one that found nobody listening.
func TestConnectionBroke(t *testing.T) {
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}))
	defer cut.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err := client.Post(cut.URL, "application/json", strings.NewReader(`{}`))
	if err == nil || !connectionBroke(err) {
		t.Errorf("a cut request: %v, want connectionBroke", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	_, err = client.Post("http://"+addr, "application/json", strings.NewReader(`{}`))
	if err == nil || connectionBroke(err) {
		t.Errorf("a refused request: %v, want not connectionBroke", err)
	}
}
