package backends

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// The notifier delivers in order, from its own goroutine, and a server
// already queued is not queued twice while the callback is busy; close
// delivers what is queued first. synctest.Wait is the sync point: it
// returns once the notifier's goroutine is blocked in the callback.
func TestNotifierCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		var got []string
		n := newNotifier(func(c listChange) {
			s := c.server
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
			if s == "a" {
				<-release
			}
		})
		n.changed("a")
		synctest.Wait() // delivering "a", blocked
		for _, s := range []string{"b", "c", "b", "c", "b"} {
			n.changed(s)
		}
		close(release)
		n.close()
		n.changed("late") // after close: dropped
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
			t.Errorf("delivered %q, want %q", got, want)
		}
	})
}
