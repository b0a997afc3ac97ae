// Package secrets is the secret store: the values a server's configuration
// refers to as ${secret:NAME} (docs/secrets.md), kept out of the
// configuration file. It keeps them in the OS keychain (macOS Keychain,
// Windows Credential Manager, a Secret Service on Linux) or, where none
// answers (a headless Linux machine, CI), in a file under the
// configuration directory, encrypted with a key kept in the state
// directory.
//
// `mcp-gateway secret` and `mcp-gateway add` write it (Open, then
// Store.Set); the gateway reads it when a server starts (Store.Get).
package secrets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/filelock"
)

// The backends. Auto, the default, is the one the store was written with,
// or for a new store the keychain when it answers within
// Options.ProbeTimeout, else the file.
const (
	Auto     = "auto"
	Keychain = "keychain"
	File     = "file"
)

// EnvVar names the environment variable that chooses the backend (Auto,
// Keychain or File) for every command.
const EnvVar = "MCP_GATEWAY_SECRETS"

// Service is the keychain service the secrets are kept under, each as an
// account named after the secret.
const Service = "mcp-gateway"

// MaxValue bounds a secret's value (Windows' Credential Manager keeps at
// most 2560 bytes; a Secret Service and the file more).
const MaxValue = 64 << 10

// ErrNotFound is the error of a secret that is not set.
var ErrNotFound = errors.New("not set")

// The store's files in Options.Dir.
const (
	indexName = "secrets.json" // the keychain's secrets' names
	fileName  = "secrets.enc"  // the file backend's secrets, encrypted
	lockName  = "secrets.lock" // held by each change of either
)

// Options say where the store is and which backend keeps it.
type Options struct {
	// Backend is Auto ("" too), Keychain or File.
	Backend string
	// Dir holds the store's files: the names of the keychain's secrets,
	// or the encrypted file (config.SecretsDir).
	Dir string
	// KeyFile is the file backend's key (config.SecretsKeyFile), created
	// with the first secret it keeps.
	KeyFile string
	// Service is the keychain service; "" means Service.
	Service string
	// ProbeTimeout bounds how long Auto waits for the keychain to answer
	// when choosing it for a new store; 0 means 3 s.
	ProbeTimeout time.Duration
}

// Store is an open secret store. Its methods may be called from several
// goroutines, and several processes may change one store at once (a file
// lock orders their changes).
type Store struct {
	opts    Options
	backend string
	why     string
	kc      keychain // the keychain's calls; nil for the file backend
}

// Open opens the store opts describe, choosing its backend (Auto: see
// the constants). Nothing is created until a secret is set.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" || opts.KeyFile == "" {
		return nil, errors.New("secrets: the store's directory and key file must be given")
	}
	if opts.Service == "" {
		opts.Service = Service
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = 3 * time.Second
	}
	s := &Store{opts: opts}
	switch opts.Backend {
	case Keychain:
		s.backend, s.why = Keychain, "chosen"
	case File:
		s.backend, s.why = File, "chosen"
	case "", Auto:
		s.backend, s.why = s.choose()
	default:
		return nil, fmt.Errorf("secrets: the backend (%s) must be %s, %s or %s, not %q", EnvVar, Auto, Keychain, File, opts.Backend)
	}
	if s.backend == Keychain {
		s.kc = osKeychain{service: opts.Service}
	}
	return s, nil
}

// choose is Auto's choice: the backend an existing store was written
// with, or the keychain when it answers in time. It returns the backend
// and why, for `secret ls`.
func (s *Store) choose() (backend, why string) {
	if exists(s.path(fileName)) {
		return File, "auto: the store is the encrypted file"
	}
	if exists(s.path(indexName)) {
		return Keychain, "auto: the store is in the keychain"
	}
	if err := probe(s.opts.Service, s.opts.ProbeTimeout); err != nil {
		return File, fmt.Sprintf("auto: no keychain (%v)", err)
	}
	return Keychain, "auto: the keychain answered"
}

// Lookup reads the secret name from the store as it is now, for a
// process that runs on while others change the store (the gateway): the
// store is opened again for each lookup, so that it is the backend the
// last `secret set` wrote, and a store never written (Auto, neither of
// Files there) is empty without asking the keychain.
func Lookup(opts Options, name string) (string, error) {
	if opts.Backend == "" || opts.Backend == Auto {
		if !slices.ContainsFunc(Files(opts.Dir), exists) {
			return "", fmt.Errorf("secret %s is %w; set it with `mcp-gateway secret set %s`", name, ErrNotFound, name)
		}
	}
	s, err := Open(opts)
	if err != nil {
		return "", err
	}
	return s.Get(name)
}

// Backend is the backend the store is kept in: Keychain or File.
func (s *Store) Backend() string { return s.backend }

// Choice says how the backend was chosen: "chosen" (Options.Backend), or
// Auto's reason.
func (s *Store) Choice() string { return s.why }

// Files are the files that change with each Set and Delete, whichever the
// backend: a running gateway watches them to restart the servers whose
// secrets changed.
func Files(dir string) []string {
	return []string{filepath.Join(dir, indexName), filepath.Join(dir, fileName)}
}

// Set sets the secret name to value.
func (s *Store) Set(name, value string) error {
	if err := checkName(name); err != nil {
		return err
	}
	switch {
	case value == "":
		return fmt.Errorf("secrets: %s: a secret cannot be empty (mcp-gateway secret rm %s removes it)", name, name)
	case len(value) > MaxValue:
		return fmt.Errorf("secrets: %s: the value is %d bytes; at most %d are kept", name, len(value), MaxValue)
	}
	return s.change(func() error {
		if err := s.checkNotHiding(); err != nil {
			return err
		}
		if s.kc == nil {
			return s.fileChange(func(m map[string]string) (bool, error) {
				m[name] = value
				return true, nil
			})
		}
		if err := s.kc.set(name, value); err != nil {
			return fmt.Errorf("secrets: setting %s in the keychain: %w", name, err)
		}
		// Written even when the name was there: its change is what tells
		// a running gateway (Files).
		return s.indexChange(func(names map[string]bool) { names[name] = true })
	})
}

// checkNotHiding refuses to begin a store in one backend while the other
// holds secrets: Auto keeps to the file once secrets.enc exists, so a first
// secret set in the file (MCP_GATEWAY_SECRETS=file, as where the keychain
// does not answer) would hide every secret of the keychain from the
// gateway, and one set in the keychain beside the file would never be read.
func (s *Store) checkNotHiding() error {
	const how = "choose that store (%s=%s), or move the secrets: `mcp-gateway secret rm` each there, and set it again here"
	if s.kc == nil {
		if exists(s.path(fileName)) {
			return nil
		}
		names, err := s.indexRead()
		if err != nil || len(names) == 0 {
			return err
		}
		return fmt.Errorf("secrets: %d secrets are in the keychain (%s lists them); a secret set in the file would hide them: "+how,
			len(names), s.path(indexName), EnvVar, Keychain)
	}
	if exists(s.path(fileName)) {
		return fmt.Errorf("secrets: the store is the encrypted file %s, which is read before the keychain: a secret set in the keychain would not be read; "+how,
			s.path(fileName), EnvVar, File)
	}
	return nil
}

// Get returns the secret name's value; an error wrapping ErrNotFound, which
// says how to set it, when it is not set.
func (s *Store) Get(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	var v string
	var err error
	if s.kc == nil {
		var m map[string]string
		if m, err = s.fileRead(); err == nil {
			var ok bool
			if v, ok = m[name]; !ok {
				err = ErrNotFound
			}
		}
	} else {
		v, err = s.kc.get(name)
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return "", fmt.Errorf("secret %s is %w in the %s store; set it with `mcp-gateway secret set %s`", name, ErrNotFound, s.backend, name)
	case err != nil:
		return "", fmt.Errorf("secrets: reading %s from the %s store: %w", name, s.backend, err)
	}
	return v, nil
}

// Delete removes the secret name; an error wrapping ErrNotFound when it
// is not set.
func (s *Store) Delete(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return s.change(func() error {
		if s.kc == nil {
			return s.fileChange(func(m map[string]string) (bool, error) {
				if _, ok := m[name]; !ok {
					return false, fmt.Errorf("secret %s is %w", name, ErrNotFound)
				}
				delete(m, name)
				return true, nil
			})
		}
		err := s.kc.del(name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("secrets: removing %s from the keychain: %w", name, err)
		}
		listed := false
		if ierr := s.indexChange(func(names map[string]bool) { listed = names[name]; delete(names, name) }); ierr != nil {
			return ierr
		}
		if err != nil && !listed {
			return fmt.Errorf("secret %s is %w", name, ErrNotFound)
		}
		return nil
	})
}

// Names lists the secrets set, sorted.
func (s *Store) Names() ([]string, error) {
	if s.kc == nil {
		m, err := s.fileRead()
		if err != nil {
			return nil, err
		}
		return sortedKeys(m), nil
	}
	names, err := s.indexRead()
	if err != nil {
		return nil, err
	}
	return sortedKeys(names), nil
}

// change runs fn holding the store's lock, the directory made first.
func (s *Store) change(fn func() error) error {
	if err := os.MkdirAll(s.opts.Dir, 0o700); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	unlock, err := filelock.Lock(s.path(lockName))
	if err != nil {
		return fmt.Errorf("secrets: locking the store: %w", err)
	}
	defer unlock()
	return fn()
}

func (s *Store) path(name string) string { return filepath.Join(s.opts.Dir, name) }

func checkName(name string) error {
	if !config.IsSecretName(name) {
		return fmt.Errorf("secrets: %q is not a secret's name: 1 to 200 letters, digits, '.', '_' and '-'", truncate(name, 40))
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
