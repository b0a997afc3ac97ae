package backends

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// A server's secrets (${secret:NAME}, docs/secrets.md) are looked up when
// it starts (Options.Secret) and put into what goes to that server only:
// its process's environment and arguments, or its remote headers. The
// Manager keeps no value: only a digest of the values the running server
// got, so that Apply restarts the servers whose secrets changed.

// resolve returns b's configuration with its secrets' values in place, and
// records their digest; on failure (a secret not set, a keychain that does
// not answer) the reason, which names the secret and how to set it.
func (b *backend) resolve() (config.Server, string) {
	if b.cfg.SecretNames() == nil {
		return b.cfg, ""
	}
	values, errs, digest := b.m.lookupSecrets(b.cfg)
	b.mu.Lock()
	b.secrets = digest
	b.mu.Unlock()
	b.values.set(values)
	b.stderr.setMask(secretMask(values))
	run, err := b.cfg.WithSecrets(func(name string) (string, error) { return values[name], errs[name] })
	if err != nil {
		return config.Server{}, err.Error()
	}
	return run, ""
}

// minMasked is the shortest secret value masked in a server's stderr:
// shorter ones would mask ordinary words and numbers, and keep little.
const minMasked = 4

// secretMask is maskLine that also masks the values of the server's own
// secrets (as config.Masked) in what it writes to stderr, which the log,
// status and clients' errors show: a server may echo its key in an error.
func secretMask(values map[string]string) func(string) string {
	forms := maskForms(values)
	return func(line string) string { return maskLine(maskValues(forms, line)) }
}

// maskForms are the texts that stand for the values when a server echoes
// them: each value as it is, as a JSON string holds it (a server that logs
// JSON) and, for a value of several lines (a PEM key), each of its lines,
// since stderr is read and masked line by line. Those shorter than
// minMasked are left out; the longest come first, so that a form inside
// another is masked as part of it.
func maskForms(values map[string]string) []string {
	var forms []string
	for _, v := range values {
		forms = append(forms, v)
		forms = append(forms, jsonForms(v)...)
		if strings.ContainsAny(v, "\r\n") {
			forms = append(forms, strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' })...)
		}
	}
	return longestFirst(forms)
}

// maskJSONForms are the forms of the values inside a JSON string: masking
// them in a JSON document (a tool's definition) leaves it valid JSON.
func maskJSONForms(values map[string]string) []string {
	var forms []string
	for _, v := range values {
		forms = append(forms, jsonForms(v)...)
		for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			forms = append(forms, jsonForms(line)...)
		}
	}
	return longestFirst(forms)
}

// jsonForms are the ways JSON writes v inside a string: with and without
// HTML escaping ("\u003c" for '<'), '/' as it is or as "\/".
func jsonForms(v string) []string {
	var forms []string
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(v) // a string always encodes
		j := strings.TrimSuffix(b.String(), "\n")
		j = j[1 : len(j)-1] // the quotes
		forms = append(forms, j, strings.ReplaceAll(j, "/", `\/`))
	}
	return forms
}

// longestFirst returns forms without duplicates and those shorter than
// minMasked, the longest first.
func longestFirst(forms []string) []string {
	forms = slices.DeleteFunc(forms, func(f string) bool { return len(f) < minMasked })
	slices.SortFunc(forms, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(forms)
}

// maskValues replaces each of forms in text with config.Masked.
func maskValues(forms []string, text string) string {
	for _, f := range forms {
		text = strings.ReplaceAll(text, f, config.Masked)
	}
	return text
}

// secretValues holds the forms (maskForms, maskJSONForms) of the values of
// the secrets a backend's running server got, for the masking of all the
// backend logs and of the reasons it shows (secretHandler,
// setStateLocked): not only its stderr, but a line on its stdout that is
// not JSON-RPC, its notifications/message, a remote's errors; and of the
// definitions it lists and its instructions (maskJSON), which go to
// clients and models, the snapshot and the pin file. Set at each start
// (resolve).
type secretValues struct{ forms atomic.Pointer[valueForms] }

type valueForms struct{ text, json []string }

func (s *secretValues) set(values map[string]string) {
	s.forms.Store(&valueForms{text: maskForms(values), json: maskJSONForms(values)})
}

// mask masks the values in text.
func (s *secretValues) mask(text string) string {
	if f := s.forms.Load(); f != nil {
		return maskValues(f.text, text)
	}
	return text
}

// maskJSON masks the values in the strings of a JSON document (a
// definition a server listed): raw itself when there are none.
func (s *secretValues) maskJSON(raw json.RawMessage) json.RawMessage {
	f := s.forms.Load()
	if f == nil || len(f.json) == 0 {
		return raw
	}
	masked := json.RawMessage(maskValues(f.json, string(raw)))
	if string(masked) == string(raw) || json.Valid(masked) {
		return masked
	}
	// A value matched outside a string (a number): mask the strings of
	// the document as decoded instead, and the numbers as strings.
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return raw // not JSON: the decoding of the lists says so
	}
	out, _ := json.Marshal(maskTree(v, func(t string) string { return maskValues(f.text, t) }))
	return out
}

// maskTree masks the strings, keys and numbers of a decoded document.
func maskTree(v any, mask func(string) string) any {
	switch v := v.(type) {
	case string:
		return mask(v)
	case json.Number:
		if m := mask(v.String()); m != v.String() {
			return m
		}
		return v
	case []any:
		for i := range v {
			v[i] = maskTree(v[i], mask)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[mask(k)] = maskTree(e, mask)
		}
		return out
	}
	return v
}

// active reports whether there is anything to mask.
func (s *secretValues) active() bool {
	f := s.forms.Load()
	return f != nil && len(f.text) > 0
}

// secretHandler masks a backend's secret values (v) in each record's
// message and attributes before h writes it.
type secretHandler struct {
	h slog.Handler
	v *secretValues
}

func (s secretHandler) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s secretHandler) Handle(ctx context.Context, r slog.Record) error {
	if !s.v.active() {
		return s.h.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, s.v.mask(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(s.maskAttr(a))
		return true
	})
	return s.h.Handle(ctx, out)
}

func (s secretHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = s.maskAttr(a)
	}
	return secretHandler{s.h.WithAttrs(masked), s.v}
}

func (s secretHandler) WithGroup(name string) slog.Handler {
	return secretHandler{s.h.WithGroup(name), s.v}
}

// maskAttr masks a's value: a string, a group's, or any other as it
// prints (an error, a list of lines).
func (s secretHandler) maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, s.v.mask(v.String()))
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		for i, g := range group {
			out[i] = s.maskAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		if text := fmt.Sprint(v.Any()); s.v.mask(text) != text {
			return slog.String(a.Key, s.v.mask(text))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// lookupSecrets looks up each secret s refers to once: the values, why the
// others cannot be read, and the digest of it all ("" when s refers to
// none), in which a secret that cannot be read counts as missing, so that
// its being set later changes the digest.
func (m *Manager) lookupSecrets(s config.Server) (values map[string]string, errs map[string]error, digest string) {
	names := s.SecretNames()
	if names == nil {
		return nil, nil, ""
	}
	values, errs = map[string]string{}, map[string]error{}
	h := sha256.New()
	for _, name := range names {
		v, err := "", errors.New("this gateway keeps no secrets")
		if m.opts.Secret != nil {
			v, err = m.opts.Secret(name)
		}
		if err != nil {
			errs[name] = err
			fmt.Fprintf(h, "%s\x00missing\x00", name)
			continue
		}
		values[name] = v
		fmt.Fprintf(h, "%s\x00%d:%s\x00", name, len(v), v)
	}
	return values, errs, hex.EncodeToString(h.Sum(nil))
}

// secretsChanged reports whether the secrets b's running server got differ
// from their values now (current: lookupSecrets' digest). A backend that
// has not looked them up yet will get the current ones.
func (b *backend) secretsChanged(current string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.secrets != "" && b.secrets != current
}
