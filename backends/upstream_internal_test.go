package backends

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// countingSource hands out tokens tok-1, tok-2, ... that live life.
type countingSource struct {
	n    int
	now  *time.Time
	life time.Duration
}

func (s *countingSource) Token(_ context.Context, c *Caller) (Token, error) {
	s.n++
	return Token{Value: fmt.Sprint("tok-", s.n), Expiry: s.now.Add(s.life)}, nil
}

// A caller's credential is kept until a quarter of its life (at most
// 30 s) before it expires, then replaced before it is used again; never
// used past the caller's own token; and dropped at a 401.
func TestCallerAuthRefreshesBeforeExpiry(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	src := &countingSource{now: &now, life: 60 * time.Second}
	a := newCallerAuth("far", src, &Caller{Subject: "alice@idp", Token: "caller-1", Expires: now.Add(time.Hour)})
	a.now = func() time.Time { return now }
	get := func() string {
		t.Helper()
		h, err := a.Header(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := get(); h != "Bearer tok-1" || src.n != 1 {
		t.Fatalf("first: %q after %d tokens", h, src.n)
	}
	now = now.Add(44 * time.Second) // 16 s left: outside the margin of 15 s
	if h := get(); h != "Bearer tok-1" || src.n != 1 {
		t.Errorf("at 44 s of 60: %q after %d tokens, want tok-1 kept", h, src.n)
	}
	now = now.Add(2 * time.Second) // 14 s left: within it
	if h := get(); h != "Bearer tok-2" || src.n != 2 {
		t.Errorf("at 46 s of 60: %q after %d tokens, want tok-2, got before tok-1 expired", h, src.n)
	}

	// A long-lived token: the margin is 30 s.
	src.life = time.Hour
	now = now.Add(time.Minute)
	a.caller.Store(&Caller{Subject: "alice@idp", Token: "caller-2", Expires: now.Add(2 * time.Hour)})
	if h := get(); h != "Bearer tok-3" {
		t.Fatalf("%q", h)
	}
	now = now.Add(time.Hour - 31*time.Second)
	if get(); src.n != 3 {
		t.Errorf("31 s before expiry: %d tokens, want 3", src.n)
	}
	now = now.Add(2 * time.Second)
	if get(); src.n != 4 {
		t.Errorf("29 s before expiry: %d tokens, want 4", src.n)
	}

	// Never past the caller's own token's expiry.
	a.caller.Store(&Caller{Subject: "alice@idp", Token: "caller-3", Expires: now.Add(10 * time.Second)})
	a.tok = Token{}
	get()
	if !a.tok.Expiry.Equal(now.Add(10 * time.Second)) {
		t.Errorf("expiry %v, want the caller's token's %v", a.tok.Expiry, now.Add(10*time.Second))
	}

	// A 401 drops it: the request is tried again with a new one.
	n := src.n
	if err := a.Refused(context.Background(), nil, &http.Response{StatusCode: http.StatusUnauthorized}); err != nil {
		t.Fatalf("Refused(401) = %v, want a retry", err)
	}
	if get(); src.n != n+1 {
		t.Errorf("after a 401: %d tokens, want %d", src.n, n+1)
	}
	if err := a.Refused(context.Background(), nil, &http.Response{StatusCode: http.StatusForbidden}); err == nil {
		t.Error("Refused(403) = nil, want the refusal")
	}
}

// passthrough follows the caller's token: a new one replaces the old at
// once.
func TestCallerAuthPassthroughFollowsCaller(t *testing.T) {
	exp := time.Now().Add(time.Hour)
	a := newCallerAuth("far", passthroughSource{"far", "urn:far"}, &Caller{Subject: "s", Token: "one", Claims: map[string]any{"aud": "urn:far"}, Expires: exp})
	if h, _ := a.Header(context.Background()); h != "Bearer one" {
		t.Fatalf("%q", h)
	}
	a.caller.Store(&Caller{Subject: "s", Token: "two", Claims: map[string]any{"aud": []any{"urn:x", "urn:far"}}, Expires: exp})
	if h, _ := a.Header(context.Background()); h != "Bearer two" {
		t.Errorf("after the caller's new token: %q", h)
	}
}

// A printed caller shows who, not the token.
func TestCallerPrintsSubject(t *testing.T) {
	c := &Caller{Subject: "alice@idp", Token: "secret-token"}
	if s := fmt.Sprintf("%v %+v", c, CallOptions{Caller: c}); strings.Contains(s, "secret-token") || !strings.Contains(s, "alice@idp") {
		t.Errorf("printed: %s", s)
	}
}
