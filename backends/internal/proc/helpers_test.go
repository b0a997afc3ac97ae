package proc_test

import (
	"testing"
	"time"
)

// waitDead polls until none of pids is alive (zombies count as dead).
func waitDead(t *testing.T, within time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still alive", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
