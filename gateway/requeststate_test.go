package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A sealed requestState opens only in the process that sealed it, with the
// key it was sealed with, unaltered, before it expires, and for the caller
// it was sealed for.
func TestSealedRequestState(t *testing.T) {
	now := time.Now()
	s := newSealer([]byte("shared key"))
	// A hold id long enough that Base64 of random bytes never holds it by
	// chance (a two-letter one did, in one run of forty).
	const hold = "hold-id-in-the-clear"
	st := s.seal(hold, "alice@test", now.Add(time.Minute))
	if !strings.HasPrefix(st, sealedPrefix) || strings.Contains(st, hold) || strings.Contains(st, "aG9sZC1pZC1pbi10aGUtY2xlYXI") {
		t.Fatalf("state %q", st)
	}
	if id, err := s.open(st, "alice@test", now); id != hold || err != nil {
		t.Errorf("open = %q, %v", id, err)
	}
	for _, who := range []string{"bob@test", ""} {
		if _, err := s.open(st, who, now); err != errStateInvalid {
			t.Errorf("opened by %q: %v", who, err)
		}
	}
	if _, err := s.open(st, "alice@test", now.Add(2*time.Minute)); err != errStateExpired {
		t.Errorf("expired: %v", err)
	}
	replica := newSealer([]byte("shared key")) // another process, same key
	if _, err := replica.open(st, "alice@test", now); err != errStateReplica {
		t.Errorf("another replica: %v", err)
	}
	if _, err := newSealer([]byte("other key")).open(st, "alice@test", now); err != errStateInvalid {
		t.Errorf("another key: %v", err)
	}
	for _, bad := range []string{st[:len(st)-1] + "A", st + "A", sealedPrefix, sealedPrefix + "!!", "opaque-backend-state", ""} {
		if bad == st {
			continue
		}
		if _, err := s.open(bad, "alice@test", now); err == nil {
			t.Errorf("opened %q", bad)
		}
	}
	if a, b := s.seal("h1", "", now), s.seal("h1", "", now); a == b {
		t.Errorf("two seals of one hold are equal: %q", a)
	}
}

// TestSealedBackendRequestState (issue 32): a backend's own requestState,
// wrapped for its caller, opens for that caller only, in any replica of
// the deployment and at any time (the backend's state says how long it
// lives), to exactly the bytes the backend gave — invalid UTF-8, HTML
// characters and escapes included; it names no held call, and a held
// call's state is no backend's.
func TestSealedBackendRequestState(t *testing.T) {
	now := time.Now()
	s := newSealer([]byte("shared key"))
	backend := json.RawMessage("\"a<b>&\\u00e9\xff\\\"\"")
	st := s.sealBackend("alice@test", "prompts/get", "a.ask", backend)
	if !strings.HasPrefix(st, sealedPrefix) || strings.Contains(st, "a<b>") {
		t.Fatalf("state %q", st)
	}
	for _, opener := range []*sealer{s, newSealer([]byte("shared key"))} {
		o, err := opener.openState(st, "alice@test", now.Add(24*time.Hour))
		if err != nil || o.Kind != kindBackendState || !bytes.Equal(o.State, backend) || o.Method != "prompts/get" || o.Name != "a.ask" || o.Hold != "" {
			t.Errorf("openState = %+v, %v", o, err)
		}
	}
	for _, who := range []string{"bob@test", ""} {
		if _, err := s.openState(st, who, now); err != errStateInvalid {
			t.Errorf("opened by %q: %v", who, err)
		}
	}
	if id, err := s.open(st, "alice@test", now); err != errStateInvalid || id != "" {
		t.Errorf("a backend's state opened as a held call's: %q, %v", id, err)
	}
	if o, err := s.openState(s.seal("hold-id", "alice@test", now.Add(time.Minute)), "alice@test", now); err != nil || o.Kind != "" || o.State != nil || o.Hold != "hold-id" {
		t.Errorf("a held call's state: %+v, %v", o, err)
	}
	if _, err := s.openState(s.sealBackend("", "tools/call", "x", backend), "", now); err != errStateInvalid {
		t.Errorf("a backend's state for nobody opened: %v", err)
	}
}
