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

// TestLogsBoundEachText: each text of a record is bounded, as the audit
// log's fields are: a client's clientInfo.name of 1 MiB (logged at info by
// "client connected" on every initialize) filled the log queue on its own,
// so the gateway's next records were dropped, and each such request wrote
// a megabyte to stderr and the debug file (a size-rotated journal lost
// every earlier record after a few). A secret is masked before the cut.
func TestLogsBoundEachText(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(maskHandler{slog.NewTextHandler(&buf, nil)})
	huge := strings.Repeat("c", 1<<20)
	const tok = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	cutSecret := strings.Repeat("x", maxLogText-10) + " " + tok
	log.With("client", huge).Info(huge, "tool", huge, "err", errors.New(huge), slog.Group("g", "name", huge), "secret", cutSecret, "n", 7)
	out := buf.String()
	if len(out) > 8*maxLogText {
		t.Errorf("a record of %d bytes, want each text bounded at %d", len(out), maxLogText)
	}
	if strings.Count(out, "[truncated: 1048576 bytes in all]") != 5 || !strings.Contains(out, "n=7") {
		t.Errorf("log: %.600s", out)
	}
	if strings.Contains(out, tok[:12]) {
		t.Errorf("a secret cut before it was masked: %s", out[len(out)-300:])
	}
}
