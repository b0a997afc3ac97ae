package gateway

import (
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
)

func TestTaggedLog(t *testing.T) {
	for in, want := range map[string]string{
		`{"level":"info","logger":"db","data":{"z":1, "a":2}}`: `{"level":"info","logger":"srv/db","data":{"z":1, "a":2}}`,
		`{"level":"info","data":"x"}`:                          `{"level":"info","data":"x","logger":"srv"}`,
		`{"logger":"","level":"info","data":"x"}`:              `{"logger":"srv","level":"info","data":"x"}`,
	} {
		got, err := taggedLog("srv", []byte(in))
		if err != nil || string(got) != want {
			t.Errorf("taggedLog(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := taggedLog("srv", []byte(`[1]`)); err == nil {
		t.Error("taggedLog accepted an array")
	}
}

// The forwarding limit is per backend: one backend's flood leaves another's
// messages through. (The mechanism is tested in backends/ratelimit.)
func TestLogLimitPerBackend(t *testing.T) {
	l := ratelimit.NewKeyed(logLimit)
	now := time.Unix(1000, 0)
	for i := range logRate {
		if ok, _ := l.Allow("a", now); !ok {
			t.Fatalf("message %d refused", i)
		}
	}
	if ok, _ := l.Allow("a", now.Add(time.Millisecond)); ok {
		t.Error("message over the burst allowed")
	}
	if ok, _ := l.Allow("b", now); !ok {
		t.Error("another server's message refused")
	}
	if ok, dropped := l.Allow("a", now.Add(time.Second)); !ok || dropped != 1 {
		t.Errorf("a second later: ok=%v dropped=%d", ok, dropped)
	}
}
