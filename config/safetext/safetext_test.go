package safetext

import "testing"

func TestStrip(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"tab\tok", "tab\tok"},
		{"\x1b[2J\x1b[Hcleared", "cleared"},
		{"\x1b]0;pwned title\x07after", "after"},
		{"\x1b]0;title\x1b\\after", "after"},
		{"red \x1b[31mERR\x1b[0m", "red ERR"},
		{"line\nlevel=ERROR msg=forged", "line level=ERROR msg=forged"},
		{"cr\roverwrite", "cr overwrite"},
		{"bell\x07 nul\x00 del\x7f", "bell nul del"},
		{"c1 \u009b2Jcsi \u009d0;t\u0007osc", "c1 csi osc"},
		{"bidi \u202eevil\u202c", "bidi evil"},
		{"bad \xff utf8", "bad \ufffd utf8"},
		{"héllo 日本", "héllo 日本"},
		{"unterminated \x1b[12", "unterminated "},
		{"\x1b", ""},
	} {
		if got := Strip(c.in, false); got != c.want {
			t.Errorf("Strip(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Strip("a\nb\x1b[1m", true); got != "a\nb" {
		t.Errorf("keepNewlines: %q", got)
	}
}

func TestRedact(t *testing.T) {
	key := "sk-proj-abcdefghijklmnop1234"
	for _, c := range []struct{ in, want string }{
		{"Incorrect API key provided: " + key + ".", "Incorrect API key provided: [redacted]."},
		{"Incorrect API key provided: sk-proj-********************1234.", "Incorrect API key provided: [redacted]."},
		{"header Authorization: Bearer abc.def.ghi-123", "header Authorization: Bearer [redacted]"},
		{"my-secret-value leaked", "[redacted] leaked"},
		{"nothing here", "nothing here"},
	} {
		if got := Redact(c.in, key, "my-secret-value", ""); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
