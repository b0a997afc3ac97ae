package gateway

import (
	"strings"
	"testing"
	"time"
)

// A sealed requestState opens only in the process that sealed it, with the
// key it was sealed with, unaltered and before it expires.
func TestSealedRequestState(t *testing.T) {
	now := time.Now()
	s := newSealer([]byte("shared key"))
	st := s.seal("h1", now.Add(time.Minute))
	if !strings.HasPrefix(st, sealedPrefix) || strings.Contains(st, "h1") {
		t.Fatalf("state %q", st)
	}
	if id, err := s.open(st, now); id != "h1" || err != nil {
		t.Errorf("open = %q, %v", id, err)
	}
	if _, err := s.open(st, now.Add(2*time.Minute)); err != errStateExpired {
		t.Errorf("expired: %v", err)
	}
	replica := newSealer([]byte("shared key")) // another process, same key
	if _, err := replica.open(st, now); err != errStateReplica {
		t.Errorf("another replica: %v", err)
	}
	if _, err := newSealer([]byte("other key")).open(st, now); err != errStateInvalid {
		t.Errorf("another key: %v", err)
	}
	for _, bad := range []string{st[:len(st)-1] + "A", st + "A", sealedPrefix, sealedPrefix + "!!", "opaque-backend-state", ""} {
		if bad == st {
			continue
		}
		if _, err := s.open(bad, now); err == nil {
			t.Errorf("opened %q", bad)
		}
	}
	if a, b := s.seal("h1", now), s.seal("h1", now); a == b {
		t.Errorf("two seals of one hold are equal: %q", a)
	}
}
