package secrets

import (
	"errors"
	"os"
	"path/filepath"
)

// keychainReachable says why no Secret Service can answer: no D-Bus
// session bus to ask. Checked before asking, because D-Bus would otherwise
// try to launch a bus of its own.
func keychainReachable() error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return nil
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "bus")); err == nil {
			return nil
		}
	}
	return errors.New("no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set")
}
