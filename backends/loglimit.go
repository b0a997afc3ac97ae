package backends

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
)

// logLimit is the forwarded log rate of one backend: its stderr lines and
// notifications/message together are logged at up to 200 a second with
// bursts of 1000; beyond that they are dropped and counted
// (docs/configuration.md). The stderr tail kept for error reports is not
// limited.
var logLimit = ratelimit.Options{Rate: 200, Burst: 1000}

// logLimited logs one record of a backend's output through l, with a
// warning first that says how many records were dropped before it. log
// names the backend.
func logLimited(l *ratelimit.Bucket, log *slog.Logger, level slog.Level, msg string, args ...any) {
	if allowLog(l, log) {
		log.Log(context.Background(), level, msg, args...)
	}
}

// allowLog reports whether one more record of a backend's output may be
// logged through l, warning first how many were dropped before it: a
// caller that must prepare a record (mask it) asks before it does.
func allowLog(l *ratelimit.Bucket, log *slog.Logger) bool {
	ok, dropped := l.Allow(time.Now())
	if ok && dropped > 0 {
		log.Warn("backend log rate limit: records dropped", "dropped", dropped)
	}
	return ok
}

// flushLogLimit reports records dropped since the last one logged (at the
// end of a backend's session, so that a flood's count is never lost).
func flushLogLimit(l *ratelimit.Bucket, log *slog.Logger) {
	if dropped := l.Flush(); dropped > 0 {
		log.Warn("backend log rate limit: records dropped", "dropped", dropped)
	}
}
