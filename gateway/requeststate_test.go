package gateway

import (
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
