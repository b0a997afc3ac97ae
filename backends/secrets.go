package backends

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	var vs []string
	for _, v := range values {
		if len(v) >= minMasked {
			vs = append(vs, v)
		}
	}
	// Longest first: a value inside another is masked as part of it.
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	return func(line string) string {
		for _, v := range vs {
			line = strings.ReplaceAll(line, v, config.Masked)
		}
		return maskLine(line)
	}
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
