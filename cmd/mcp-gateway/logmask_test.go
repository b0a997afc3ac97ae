package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestLogsMaskSecrets: a secret of a known shape is masked wherever it is
// in a record: the message, a string, an error, a group, a logger's own
// attributes.
func TestLogsMaskSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(maskHandler{slog.NewTextHandler(&buf, nil)})
	const tok = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	log.With("token", tok).Info("calling with "+tok, "line", "Authorization: Bearer abc123def456ghi789jkl",
		"err", errors.New("denied for "+tok), slog.Group("g", "k", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"), "n", 7)
	out := buf.String()
	for _, secret := range []string{tok, "abc123def456ghi789jkl", "dozjgNryP4J3jVmNHl0w5N"} {
		if strings.Contains(out, secret) {
			t.Errorf("secret %q logged: %s", secret, out)
		}
	}
	if strings.Count(out, "[redacted:") != 5 || !strings.Contains(out, "n=7") {
		t.Errorf("log: %s", out)
	}
}
