package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultProgressInterval is how often a long call of the gateway's own
// (the answer tools) reports progress: well within the 60 s request
// timeout of common clients, which reset it on each progress notification.
const defaultProgressInterval = 5 * time.Second

// startProgress reports a call of the gateway's own to a client that asked
// for progress (a progressToken in _meta): a notifications/progress every
// interval with the elapsed time and the latest step, until stop, which
// waits so that no progress follows the result. Without a token (or a
// notify) it does nothing.
func (f *front) startProgress(tc toolCall, notify func(*mcp.ProgressNotificationParams)) (step func(string), stop func()) {
	token := tc.progressToken()
	if len(token) == 0 || string(token) == "null" || notify == nil {
		return nil, func() {}
	}
	token = bytes.Clone(token)
	interval := f.g.opts.ProgressInterval
	if interval <= 0 {
		interval = defaultProgressInterval
	}
	var mu sync.Mutex
	current := "starting"
	step = func(s string) {
		mu.Lock()
		current = s
		mu.Unlock()
	}
	start := time.Now()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			elapsed := time.Since(start)
			mu.Lock()
			msg := fmt.Sprintf("%.0fs elapsed; %s", elapsed.Seconds(), current)
			mu.Unlock()
			notify(&mcp.ProgressNotificationParams{
				ProgressToken: json.RawMessage(token),
				Progress:      elapsed.Seconds(),
				Message:       msg,
			})
			f.flushClient()
		}
	}()
	return step, func() {
		close(quit)
		<-done
	}
}

// flushClient writes what the session buffered for the client (progress
// notifications are buffered: see session.progress).
func (f *front) flushClient() {
	f.g.mu.Lock()
	s := f.stream
	f.g.mu.Unlock()
	if s != nil {
		if err := s.Send(outMsg{}); err != nil {
			f.log.Debug("flush to client", "err", err)
		}
	}
}
