package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// inSession marks the test binary run again inside a D-Bus session with a
// Secret Service (keychainSession).
const inSession = "MCP_GATEWAY_TEST_SECRET_SERVICE"

// TestKeychainStore: the keychain backend against the OS's own keychain:
// on Linux a real Secret Service (gnome-keyring-daemon, unlocked, in a
// private D-Bus session: scripts/os-packages installs both), on macOS the
// Keychain and on Windows the Credential Manager of the runner. The index
// lists the names and never a value.
func TestKeychainStore(t *testing.T) {
	if runtime.GOOS == "linux" && os.Getenv(inSession) == "" {
		keychainSession(t, "^TestKeychainStore$")
		return
	}
	service := "mcp-gateway-test-" + randomHex(t)
	dir := t.TempDir()
	opts := Options{Dir: dir, KeyFile: filepath.Join(t.TempDir(), "key"), Service: service}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != Keychain || s.Choice() != "auto: the keychain answered" {
		t.Fatalf("Auto with a keychain: %s (%s)", s.Backend(), s.Choice())
	}
	t.Cleanup(func() {
		for _, n := range []string{"github.GITHUB_TOKEN", "other.KEY", "kept.VALUE"} {
			s.kc.del(n)
		}
	})
	roundTrip(t, s)
	const value = "keychain-VALUE-2718"
	if err := s.Set("kept.VALUE", value); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, indexName))
	if err != nil || !strings.Contains(string(data), `"kept.VALUE"`) || strings.Contains(string(data), value) {
		t.Errorf("index: %s, %v", data, err)
	}
	if exists(filepath.Join(dir, fileName)) || exists(opts.KeyFile) {
		t.Error("the keychain backend wrote the file backend's files")
	}
	// Another process (a running gateway) opening the store reads it.
	s2, err := Open(Options{Dir: dir, KeyFile: opts.KeyFile, Service: service})
	if err != nil || s2.Backend() != Keychain {
		t.Fatalf("reopened: %v %s", err, s2.Backend())
	}
	if got, err := s2.Get("kept.VALUE"); err != nil || got != value {
		t.Errorf("Get from the reopened store = %q, %v", got, err)
	}
	// A secret the index lists but the keychain lost is removed from it.
	if err := s.kc.del("kept.VALUE"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("kept.VALUE"); err != nil {
		t.Errorf("Delete of an indexed secret the keychain lost: %v", err)
	}
	if names, _ := s.Names(); len(names) != 0 {
		t.Errorf("names left: %q", names)
	}
	if err := s.Delete("kept.VALUE"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete again: %v", err)
	}
}

// keychainSession runs the test named by run again in a private D-Bus
// session whose Secret Service is gnome-keyring-daemon with a login
// keyring unlocked by a password on its standard input, in a temporary
// HOME. The session and the daemon end with the test.
func keychainSession(t *testing.T, run string) {
	t.Helper()
	session, err1 := exec.LookPath("dbus-run-session")
	_, err2 := exec.LookPath("gnome-keyring-daemon")
	if err := errors.Join(err1, err2); err != nil {
		if testing.Short() && os.Getenv("CI") != "true" {
			t.Skipf("skipped under -short: no Secret Service to test against (%v); scripts/os-packages installs gnome-keyring and dbus-daemon", err)
		}
		t.Fatalf("no Secret Service to test against (%v): scripts/os-packages installs gnome-keyring and dbus-daemon (scripts/test runs it)", err)
	}
	home := t.TempDir()
	cmd := exec.Command(session, "--", "sh", "-c",
		`printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 1; exec "$@"`,
		"sh", os.Args[0], "-test.run="+run, "-test.count=1", "-test.v")
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		// The session's own bus and keyring, not the user's.
		return strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") || strings.HasPrefix(kv, "XDG_RUNTIME_DIR=")
	})
	cmd.Env = append(env, inSession+"=1", "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	out, err := cmd.CombinedOutput()
	t.Logf("in a D-Bus session with gnome-keyring-daemon:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: ") {
		t.Fatalf("the test in the D-Bus session: %v", err)
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
