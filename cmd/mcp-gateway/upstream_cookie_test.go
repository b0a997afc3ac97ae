package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestUpstreamSignInCookieHostOnly: on an https gateway the sign-in's
// browser nonce is a __Host- cookie, which no other host can set. A
// sibling subdomain (any page with script on one: every cookie of the
// parent domain is its to set) could otherwise plant the nonce of a flow
// its owner began for themselves into a person's browser and send the
// person to the authorization URL: the person's upstream account would be
// bound to the attacker. A nonce in a cookie of the plain name — all such
// a sibling can set — completes nothing.
func TestUpstreamSignInCookieHostOnly(t *testing.T) {
	t.Parallel()
	up := newUserUpstream(t)
	srv := config.Server{Name: "people", URL: up.URL + "/mcp", UpstreamAuth: config.UpstreamAuth{Mode: config.UpstreamPerUserLogin}}
	l := backends.NewUserLogins(backends.UserLoginOptions{TokenDir: t.TempDir(), Base: "https://gw.example", StateKey: []byte("cookie-test-key"),
		Server: func(name string) (config.Server, bool) { return srv, name == srv.Name }})
	mux := http.NewServeMux()
	(&upstreamLogins{l: l, secure: true, a: &app{log: slog.New(slog.DiscardHandler)}}).routes(mux)

	link, err := url.Parse(l.Link("people", "mallory@op"))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "https://gw.example/upstream/login/people", strings.NewReader(url.Values{"state": {link.Query().Get("state")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("begin: %d %s", w.Code, w.Body)
	}
	var nonce *http.Cookie
	for _, c := range w.Result().Cookies() {
		if strings.HasSuffix(c.Name, upstreamCookie) {
			nonce = c
		}
	}
	if nonce == nil || nonce.Name != "__Host-"+upstreamCookie || nonce.Path != "/" || !nonce.Secure || !nonce.HttpOnly || nonce.Domain != "" {
		t.Fatalf("the browser's nonce: %+v, want a __Host- cookie (Secure, Path=/, no Domain, HttpOnly)", nonce)
	}

	// The flow, at the upstream's authorization server, as mallory.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(w.Header().Get("Location") + "&user=MALLORY")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || cb.Path != backends.UserLoginCallback {
		t.Fatalf("the authorization server answered %d, to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The person's browser, with mallory's nonce planted by a sibling.
	req = httptest.NewRequest(http.MethodGet, "https://gw.example"+cb.RequestURI(), nil)
	req.AddCookie(&http.Cookie{Name: upstreamCookie, Value: nonce.Value})
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "another browser") {
		t.Errorf("the callback with the nonce in a cookie a sibling can set: %d %s", w.Code, w.Body)
	}
}
