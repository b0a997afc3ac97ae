package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
)

// The file backend keeps every secret in secrets.enc (0600), sealed with
// AES-256-GCM under a random 256-bit key kept in another file, KeyFile
// (0600, in the state directory): a copy of the configuration directory
// alone (a dotfiles repository, a backup, a support bundle) reveals no
// secret. docs/secrets.md says what it does not protect against.

// sealed is secrets.enc: the nonce and the sealed JSON of the values.
type sealed struct {
	Version int    `json:"version"`
	Nonce   []byte `json:"nonce"`
	Data    []byte `json:"data"`
}

// additional binds the sealed data to its use.
var additional = []byte("mcp-gateway secrets v1")

const keySize = 32

// fileRead returns the file backend's secrets; none when there is no file.
func (s *Store) fileRead() (map[string]string, error) {
	data, err := os.ReadFile(s.path(fileName))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	key, err := s.key(false)
	if err != nil {
		return nil, err
	}
	var f sealed
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, s.damaged(fmt.Sprintf("%d bytes that are not a sealed store: cut short, or written over", len(data)))
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("secrets: %s is of version %d, which this mcp-gateway does not read (a newer one wrote it)", s.path(fileName), f.Version)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(f.Nonce) != aead.NonceSize() {
		return nil, s.damaged("its nonce is not one")
	}
	plain, err := aead.Open(nil, f.Nonce, f.Data, additional)
	if err != nil {
		return nil, fmt.Errorf("secrets: %s does not open with the key %s (another key, or a damaged file)", s.path(fileName), s.opts.KeyFile)
	}
	m := map[string]string{}
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, s.damaged(err.Error())
	}
	return m, nil
}

// damaged is the error of a sealed file that cannot be read, saying what
// to do; nothing is written over it (Set fails too), so that what it
// holds may still be restored.
func (s *Store) damaged(why string) error {
	return fmt.Errorf("secrets: %s is damaged (%s): restore it from a backup, or remove it and set the secrets again", s.path(fileName), why)
}

// fileChange changes the secrets with fn and seals them again under a new
// nonce, with the lock held (change). fn says whether anything changed.
func (s *Store) fileChange(fn func(map[string]string) (bool, error)) error {
	m, err := s.fileRead()
	if err != nil {
		return err
	}
	if changed, err := fn(m); err != nil || !changed {
		return err
	}
	key, err := s.key(true)
	if err != nil {
		return err
	}
	aead, err := newAEAD(key)
	if err != nil {
		return err
	}
	plain, _ := json.Marshal(m) // strings only
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce) // never fails (crypto/rand)
	data, _ := json.Marshal(sealed{Version: 1, Nonce: nonce, Data: aead.Seal(nil, nonce, plain, additional)})
	clear(plain)
	if err := atomicfile.WriteFile(s.path(fileName), data, 0o600); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	return nil
}

// key reads the file backend's key, or, with create, makes one when there
// is none and no sealed file either.
func (s *Store) key(create bool) ([]byte, error) {
	kf := s.opts.KeyFile
	key, err := os.ReadFile(kf)
	switch {
	case err == nil && len(key) == keySize:
		if err := checkPrivate(kf); err != nil {
			return nil, err
		}
		return key, nil
	case err == nil:
		return nil, fmt.Errorf("secrets: the key %s is not %d bytes long", kf, keySize)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("secrets: %w", err)
	case !create || exists(s.path(fileName)):
		return nil, fmt.Errorf("secrets: the key %s of %s is missing: the secrets in it cannot be read (remove %[2]s and set them again)", kf, s.path(fileName))
	}
	if err := os.MkdirAll(filepath.Dir(kf), 0o700); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	key = make([]byte, keySize)
	rand.Read(key) // never fails (crypto/rand)
	if err := atomicfile.WriteFile(kf, key, 0o600); err != nil {
		return nil, fmt.Errorf("secrets: writing the key: %w", err)
	}
	return key, nil
}

// checkPrivate refuses a key that other users may read or replace (a copy
// that lost its mode, a chmod -R): with it, the sealed file is theirs to
// read, as ssh refuses such a private key. Windows has no such modes: a
// file in the user's profile is the user's.
func checkPrivate(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("secrets: the key %s may be read or changed by other users (mode %04o): make it yours alone (chmod 600 %[1]s)", path, perm)
	}
	return nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return cipher.NewGCM(block)
}
