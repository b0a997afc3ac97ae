package main

import (
	"context"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// maskHandler masks secrets of a known shape (safetext.MaskShapes: key
// blocks, tokens, JWTs, Authorization values) in every record before it
// is written: a backend's stderr line, an upstream error or a logged
// argument never puts a secret in the log. It also bounds each text
// (boundText). Records with neither pass unchanged.
type maskHandler struct{ slog.Handler }

func (h maskHandler) Handle(ctx context.Context, r slog.Record) error {
	msg, n := boundText(r.Message)
	attrs := make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		var m int
		a, m = maskAttr(a)
		n += m
		attrs = append(attrs, a)
		return true
	})
	if n == 0 {
		return h.Handler.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	out.AddAttrs(attrs...)
	return h.Handler.Handle(ctx, out)
}

func (h maskHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i], _ = maskAttr(a)
	}
	return maskHandler{h.Handler.WithAttrs(masked)}
}

func (h maskHandler) WithGroup(name string) slog.Handler {
	return maskHandler{h.Handler.WithGroup(name)}
}

// maskAttr masks and bounds an attribute's value: strings, groups, and
// values of other kinds as they print (errors, lists).
func maskAttr(a slog.Attr) (slog.Attr, int) {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s, n := boundText(v.String()); n > 0 {
			return slog.String(a.Key, s), n
		}
	case slog.KindGroup:
		group := v.Group()
		out, total := make([]slog.Attr, len(group)), 0
		for i, g := range group {
			var n int
			out[i], n = maskAttr(g)
			total += n
		}
		if total > 0 {
			return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}, total
		}
	case slog.KindAny:
		if s, n := boundText(fmt.Sprint(v.Any())); n > 0 {
			return slog.String(a.Key, s), n
		}
	}
	return slog.Attr{Key: a.Key, Value: v}, 0
}

// maxLogText bounds each text of a log record (the message, each string,
// each value as it prints), as the audit log bounds its fields: a client's
// names (clientInfo.name, a tool name) are logged, and one of megabytes
// would fill the log queue (logSink) and drop the gateway's next records,
// and rotate a size-bounded journal's earlier ones away.
const maxLogText = 4 << 10

// boundText masks s's secrets and then, when it is longer than maxLogText,
// cuts it (at a character's start) and marks the cut; n counts the masks.
// Masked first, so that no cut leaves part of a secret unmasked.
func boundText(s string) (string, int) {
	s, n := safetext.MaskShapesString(s)
	if len(s) <= maxLogText {
		return s, n
	}
	cut := maxLogText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…[truncated: %d bytes in all]", s[:cut], len(s)), n + 1
}
