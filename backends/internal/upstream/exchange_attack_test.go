package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The caller's token never comes back in an error, even from a token
// endpoint whose error_description echoes what it was sent: the error
// reaches the client, and the gateway's logs.
func TestExchangeErrorHidesSubjectToken(t *testing.T) {
	const subject = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"subject_token ` + r.PostForm.Get("subject_token") + ` is not active"}`))
	}))
	t.Cleanup(s.Close)
	x := &Exchanger{Grant: GrantTokenExchange, TokenURL: s.URL, ClientID: "gw", SubjectType: TypeAccessToken, HTTP: s.Client()}
	_, _, err := x.Exchange(context.Background(), subject)
	if err == nil || strings.Contains(err.Error(), subject) || strings.Contains(err.Error(), subject[:40]) {
		t.Fatalf("error %q shows the caller's token", err)
	}
	if !strings.Contains(err.Error(), "invalid_grant") || !strings.Contains(err.Error(), "is not active") {
		t.Errorf("error %q lost the endpoint's reason", err)
	}
}

// An expires_in that is no duration (NaN, infinite, beyond what a
// time.Duration holds) is refused: converted, it gave an expiry that
// depends on the CPU (amd64: centuries ago; arm64: never).
func TestExchangeExpiresInOutOfRange(t *testing.T) {
	for _, v := range []string{`"NaN"`, `"Inf"`, `"+Infinity"`, `1e300`, `1e10`} {
		s, _, _ := endpoint(t, 200, `{"access_token":"x","token_type":"Bearer","expires_in":`+v+`}`)
		x := &Exchanger{Grant: GrantTokenExchange, TokenURL: s.URL, ClientID: "gw", SubjectType: TypeAccessToken, HTTP: s.Client()}
		if _, exp, err := x.Exchange(context.Background(), "t"); err == nil {
			t.Errorf("expires_in %s: accepted, expiry %v", v, exp)
		}
	}
	// A long but real lifetime is kept as given.
	s, _, _ := endpoint(t, 200, `{"access_token":"x","token_type":"Bearer","expires_in":31536000}`)
	now := time.Unix(1_000_000, 0)
	x := &Exchanger{Grant: GrantTokenExchange, TokenURL: s.URL, ClientID: "gw", SubjectType: TypeAccessToken, HTTP: s.Client(), Now: func() time.Time { return now }}
	if _, exp, err := x.Exchange(context.Background(), "t"); err != nil || !exp.Equal(now.Add(365*24*time.Hour)) {
		t.Errorf("a year: %v %v", exp, err)
	}
}

// What a token endpoint can do to the gateway is bounded: an answer of
// megabytes is cut at maxBody and refused, and one that never comes ends
// with the call's context.
func TestExchangeEndpointBounded(t *testing.T) {
	huge := `{"access_token":"` + strings.Repeat("a", 2*maxBody) + `","token_type":"Bearer"}`
	s, _, _ := endpoint(t, 200, huge)
	x := &Exchanger{Grant: GrantTokenExchange, TokenURL: s.URL, ClientID: "gw", SubjectType: TypeAccessToken, HTTP: s.Client()}
	if tok, _, err := x.Exchange(context.Background(), "t"); err == nil {
		t.Errorf("an answer of %d bytes: a token of %d", len(huge), len(tok))
	}

	arrived := make(chan struct{})
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	x = &Exchanger{Grant: GrantTokenExchange, TokenURL: hang.URL, ClientID: "gw", SubjectType: TypeAccessToken, HTTP: hang.Client()}
	if _, _, err := x.Exchange(ctx, "t"); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("a hanging endpoint, the call cancelled: %v", err)
	}
}
