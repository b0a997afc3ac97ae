package testutil

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// LogRecorder is a slog.Handler that keeps every record as one line,
// "LEVEL message key=value ...", with the attributes of Logger.With first.
type LogRecorder struct {
	s     *recs
	attrs string // " key=value" of WithAttrs, in order
}

type recs struct {
	mu    sync.Mutex
	lines []string
}

// NewLogRecorder returns an empty recorder.
func NewLogRecorder() *LogRecorder { return &LogRecorder{s: &recs{}} }

// Logger returns a logger that writes to r.
func (r *LogRecorder) Logger() *slog.Logger { return slog.New(r) }

func (r *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message + r.attrs)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	r.s.mu.Lock()
	r.s.lines = append(r.s.lines, b.String())
	r.s.mu.Unlock()
	return nil
}

func (r *LogRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	attrs := r.attrs
	for _, a := range as {
		attrs += " " + a.Key + "=" + a.Value.String()
	}
	return &LogRecorder{s: r.s, attrs: attrs}
}

// WithGroup is not used by the code under test; the group is ignored.
func (r *LogRecorder) WithGroup(string) slog.Handler { return r }

// Lines returns every record so far.
func (r *LogRecorder) Lines() []string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return append([]string(nil), r.s.lines...)
}

// Find returns the records that contain every one of subs.
func (r *LogRecorder) Find(subs ...string) []string {
	var out []string
next:
	for _, l := range r.Lines() {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}
