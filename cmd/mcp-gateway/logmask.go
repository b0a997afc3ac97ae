package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// maskHandler masks secrets of a known shape (safetext.MaskShapes: key
// blocks, tokens, JWTs, Authorization values) in every record before it
// is written: a backend's stderr line, an upstream error or a logged
// argument never puts a secret in the log. Records without one pass
// unchanged.
type maskHandler struct{ slog.Handler }

func (h maskHandler) Handle(ctx context.Context, r slog.Record) error {
	msg, n := safetext.MaskShapesString(r.Message)
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

// maskAttr masks an attribute's value: strings, groups, and values of
// other kinds as they print (errors, lists).
func maskAttr(a slog.Attr) (slog.Attr, int) {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s, n := safetext.MaskShapesString(v.String()); n > 0 {
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
		if s, n := safetext.MaskShapesString(fmt.Sprint(v.Any())); n > 0 {
			return slog.String(a.Key, s), n
		}
	}
	return slog.Attr{Key: a.Key, Value: v}, 0
}
