package testutil

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test with what if it
// does not within d. The first polls come quickly (1 ms, doubling) and the
// interval grows to 100 ms, so that a condition that is nearly true costs
// nothing and a slow one does not spin on a loaded machine.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(d, cond) {
		t.Fatalf("timed out after %s waiting for: %s", d, what)
	}
}

// Poll is WaitFor without the test: it reports whether cond held within d.
func Poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	interval := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
		interval = min(2*interval, 100*time.Millisecond)
	}
	return true
}

// WaitDead waits until none of pids is alive (a zombie counts as dead), and
// fails the test if one still is after d.
func WaitDead(t testing.TB, d time.Duration, pids ...int) {
	t.Helper()
	WaitFor(t, d, fmt.Sprintf("processes %v to end", pids), func() bool { return !slices.ContainsFunc(pids, Alive) })
}
