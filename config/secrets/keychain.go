package secrets

import (
	"errors"
	"fmt"
	"time"

	"github.com/zalando/go-keyring"
)

// keychain is the OS keychain's part of the store: one item per secret,
// under the store's service, with the secret's name as its account.
type keychain interface {
	set(name, value string) error
	get(name string) (string, error) // ErrNotFound when not set
	del(name string) error           // ErrNotFound when not set
}

// keychainTimeout bounds each call of the keychain: a locked keychain may
// wait for the user to unlock it, but a server's start or a command must
// not wait forever for one that never answers.
const keychainTimeout = 60 * time.Second

// probeAccount is the account Auto's probe looks up: one never set.
const probeAccount = "mcp-gateway.probe"

// osKeychain is the OS keychain through go-keyring: macOS's Keychain (the
// security command, the value on its standard input, never in its
// arguments), Windows' Credential Manager, a Secret Service over D-Bus.
type osKeychain struct{ service string }

func (k osKeychain) set(name, value string) error {
	return bounded(keychainTimeout, func() error { return keyring.Set(k.service, name, value) })
}

func (k osKeychain) get(name string) (string, error) {
	var v string
	err := bounded(keychainTimeout, func() error {
		var err error
		v, err = keyring.Get(k.service, name)
		return err
	})
	return v, err
}

func (k osKeychain) del(name string) error {
	return bounded(keychainTimeout, func() error { return keyring.Delete(k.service, name) })
}

// probe reports whether the keychain answers within timeout: a lookup of
// an account never set that comes back as not found (or found).
func probe(service string, timeout time.Duration) error {
	if err := keychainReachable(); err != nil {
		return err
	}
	return bounded(timeout, func() error {
		_, err := keyring.Get(service, probeAccount)
		if errors.Is(err, keyring.ErrNotFound) {
			return nil
		}
		return err
	})
}

// bounded runs fn and returns its error, go-keyring's ErrNotFound as
// ErrNotFound, or an error after timeout if it has not returned by then.
// The keychain's calls cannot be cancelled: one that never returns leaves
// its goroutine waiting until the process exits (a command ends soon; a
// gateway has given up on that one call only).
func bounded(timeout time.Duration, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		if errors.Is(err, keyring.ErrNotFound) {
			return ErrNotFound
		}
		return err
	case <-t.C:
		return fmt.Errorf("the keychain did not answer within %s (is it locked, waiting for its password?)", timeout)
	}
}
