package testutil

import (
	"log/slog"
	"slices"
	"strings"
)

// LogRecorder keeps a logger's records as lines in slog's text format
// without the time: `level=WARN msg="disk almost full" server=l key=value`,
// the attributes of Logger.With first. The zero value is empty.
type LogRecorder struct{ buf Buffer }

// Logger returns a logger that writes every level to r.
func (r *LogRecorder) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&r.buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// Lines returns every record so far (the text handler quotes newlines
// within a record).
func (r *LogRecorder) Lines() []string {
	return strings.FieldsFunc(r.buf.String(), func(c rune) bool { return c == '\n' })
}

// Find returns the records that contain every one of subs.
func (r *LogRecorder) Find(subs ...string) []string {
	var out []string
	for _, l := range r.Lines() {
		if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(l, s) }) {
			out = append(out, l)
		}
	}
	return out
}
