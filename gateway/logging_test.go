package gateway

import (
	"testing"
	"time"
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

func TestLogLimiter(t *testing.T) {
	var l logLimiter
	now := time.Unix(1000, 0)
	for i := range logBurst {
		if ok, _ := l.allow("a", now); !ok {
			t.Fatalf("message %d refused", i)
		}
	}
	if ok, _ := l.allow("a", now.Add(logWindow/2)); ok {
		t.Error("message over the burst allowed")
	}
	if ok, _ := l.allow("b", now); !ok {
		t.Error("another server's message refused")
	}
	if ok, dropped := l.allow("a", now.Add(logWindow)); !ok || dropped != 1 {
		t.Errorf("next window: ok=%v dropped=%d", ok, dropped)
	}
}
