package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsKeychainEndToEnd: through the binary, with the store in a
// real Secret Service (gnome-keyring-daemon, unlocked, in a private D-Bus
// session; scripts/os-packages installs both): `secret set` chooses the
// keychain by itself (auto), and a server started by `call` gets the
// value. The configuration directory holds the secret's name only.
func TestSecretsKeychainEndToEnd(t *testing.T) {
	session, err1 := exec.LookPath("dbus-run-session")
	_, err2 := exec.LookPath("gnome-keyring-daemon")
	if err1 != nil || err2 != nil {
		if testing.Short() && os.Getenv("CI") != "true" {
			t.Skip("skipped under -short: no Secret Service (scripts/os-packages installs gnome-keyring and dbus-daemon)")
		}
		t.Fatal("no Secret Service to test against: scripts/os-packages installs gnome-keyring and dbus-daemon (scripts/test runs it)")
	}
	t.Parallel()
	env := baseEnv(t)
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	const value = "keychain-e2e-VALUE-6b1d"
	a := tb("a", "-env-digest")
	a.Env = map[string]string{"TOKEN": "${secret:a.TOKEN}"}
	cfg := beConfig(t, a)
	valueFile := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(valueFile, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// One session for the three commands, as a desktop has one.
	script := `printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 1
"$1" secret set a.TOKEN <"$2" || exit 1
echo "== ls"; "$1" secret ls || exit 1
echo "== call"; "$1" call a.env_digest '{"name":"TOKEN"}' --config "$3"`
	cmd := exec.Command(session, "--", "sh", "-c", script, "sh", gatewayBin, valueFile, cfg)
	cmd.Env = append(env, "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "secret a.TOKEN set in the keychain store") || !strings.Contains(string(out), "# store: keychain (auto: the store is in the keychain)\na.TOKEN\n") {
		t.Errorf("secret set and ls do not say the keychain keeps a.TOKEN:\n%s", out)
	}
	if want := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(value))); !strings.Contains(string(out), want) {
		t.Errorf("the server did not get the secret (want %s):\n%s", want, out)
	}
	if strings.Contains(string(out), value) {
		t.Errorf("the output holds the secret:\n%s", out)
	}
	index, err := os.ReadFile(filepath.Join(home, ".config", "mcp-gateway", "secrets.json"))
	if err != nil || !strings.Contains(string(index), `"a.TOKEN"`) {
		t.Errorf("the index: %s %v", index, err)
	}
	noSecretUnder(t, value, home)
}
