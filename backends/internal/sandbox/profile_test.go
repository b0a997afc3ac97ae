package sandbox

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestProfile compares the macOS profile of a confined server (its
// files, devices, the gateway's files denied, network through the egress
// proxy's port) with testdata/golden/profile.sb, on every OS: a path holding a
// quote and a backslash is written escaped. The darwin test
// (TestProfileOnMacOS) checks that macOS compiles and enforces it.
func TestProfile(t *testing.T) {
	p := Plan{
		FS:      true,
		Read:    []string{"/usr", "/System", "/Users/me/.nvm/versions/node/v20.11.0", `/Users/me/notes "draft" \ old`, "/usr"},
		Write:   []string{"/Users/me/.local/state/mcp-gateway/sandbox/notes", `/Users/me/notes "draft" \ old`},
		Devices: []string{"/dev/null", "/dev/urandom"},
		Deny:    []string{"/Users/me/.config/mcp-gateway", "/Users/me/.local/state/mcp-gateway/pins.json"},
		Net:     "ports",
		Ports:   []uint16{41234},
	}
	got, err := Profile(p)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "profile.sb", []byte(got))
	for _, line := range []string{
		`  (subpath "/Users/me/notes \"draft\" \\ old")`,
		`(allow network-outbound (remote ip "localhost:41234"))`,
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("profile lacks %s", line)
		}
	}
	if strings.Count(got, `(subpath "/usr")`) != 1 {
		t.Error("a path given twice is written twice")
	}
}

// TestProfileNetwork: none allows no socket operation at all, all allows
// every one, and an unknown policy is an error rather than an open
// profile.
func TestProfileNetwork(t *testing.T) {
	none, err := Profile(Plan{Net: "none"})
	if err != nil || strings.Contains(none, "(allow network") || strings.Contains(none, "(allow system-socket)") {
		t.Errorf("none: %v\n%s", err, none)
	}
	all, err := Profile(Plan{})
	if err != nil || !strings.Contains(all, "(allow network*)") || !strings.Contains(all, "(allow file-read* file-write*)\n") {
		t.Errorf("all, files not confined: %v\n%s", err, all)
	}
	if _, err := Profile(Plan{Net: "some"}); err == nil {
		t.Error("an unknown network policy made a profile")
	}
}

// TestSBPLString: `"` and `\` are escaped, anything else is kept as it
// is (spaces, parentheses, semicolons, non-ASCII), and a control
// character, which could end the string's line in the profile, is an
// error, in every list the profile writes.
func TestSBPLString(t *testing.T) {
	for in, want := range map[string]string{
		`/a/b`:                `"/a/b"`,
		`/a "b"`:              `"/a \"b\""`,
		`C:\x\`:               `"C:\\x\\"`,
		`/x") (allow default`: `"/x\") (allow default"`,
		"/é (1); #t":          `"/é (1); #t"`,
	} {
		if got, err := sbplString(in); err != nil || got != want {
			t.Errorf("%q: %s %v, want %s", in, got, err, want)
		}
	}
	for _, p := range []Plan{
		{FS: true, Read: []string{"/a\nb"}},
		{FS: true, Write: []string{"/a\x00"}},
		{FS: true, Deny: []string{"/a\x7f"}},
	} {
		if _, err := Profile(p); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%+v: %v, want a refusal", p, err)
		}
	}
}
