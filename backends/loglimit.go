package backends

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Forwarded log rate: a backend's stderr lines and notifications/message
// together are logged at up to logRate a second with bursts of logBurst;
// beyond that they are dropped and counted (docs/configuration.md). A
// backend writing millions of lines must not turn into gigabytes of the
// gateway's stderr. The stderr tail kept for error reports is not limited.
const (
	logRate  = 200
	logBurst = 1000
	// logResume is the allowance that must have built up again before
	// records pass after a drop, so that a steady flood yields a few
	// "dropped" warnings a second rather than one per record.
	logResume = logRate / 4
)

// logLimiter is a token bucket for one backend's forwarded log records.
type logLimiter struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// allow reports whether one more record may be logged now and, when it may
// after some were dropped, how many were.
func (l *logLimiter) allow(now time.Time) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		l.tokens = logBurst
	} else {
		l.tokens = min(logBurst, l.tokens+now.Sub(l.last).Seconds()*logRate)
	}
	l.last = now
	if l.tokens < 1 || l.dropped > 0 && l.tokens < logResume {
		l.dropped++
		return false, 0
	}
	l.tokens--
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}

// logLimited logs one record of server's output through l, with a warning
// first that says how many records were dropped before it.
func logLimited(l *logLimiter, log *slog.Logger, level slog.Level, msg, server string, args ...any) {
	ok, dropped := l.allow(time.Now())
	if !ok {
		return
	}
	if dropped > 0 {
		log.Warn("backend log rate limit: records dropped", "server", server, "dropped", dropped)
	}
	log.Log(context.Background(), level, msg, append([]any{"server", server}, args...)...)
}

// flush reports records dropped since the last one logged (at the end of a
// backend's session, so that a flood's count is never lost).
func (l *logLimiter) flush(log *slog.Logger, server string) {
	l.mu.Lock()
	dropped := l.dropped
	l.dropped = 0
	l.mu.Unlock()
	if dropped > 0 {
		log.Warn("backend log rate limit: records dropped", "server", server, "dropped", dropped)
	}
}
