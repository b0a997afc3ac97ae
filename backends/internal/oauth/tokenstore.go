package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
	"golang.org/x/oauth2"
)

// A tokenStore keeps one remote server's OAuth sign-in in a file of its
// own, DIR/NAME.json, mode 0600: the client the gateway signed in as and
// its tokens. `mcp-gateway login` writes it; a running gateway reads it
// again whenever it changes (so a login needs no restart) and writes
// refreshed tokens back.
type tokenStore struct{ path string }

// TokenPath is the file that keeps server's sign-in under dir.
func TokenPath(dir, server string) string { return filepath.Join(dir, server+".json") }

// signIn is what a tokenStore holds.
type signIn struct {
	URL          string           `json:"url"` // the server signed in to
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
}

// config is the OAuth client of a sign-in, for refreshing its tokens.
func (s *signIn) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     s.ClientID,
		ClientSecret: s.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: s.AuthURL, TokenURL: s.TokenURL, AuthStyle: s.AuthStyle},
		Scopes:       s.Scopes,
	}
}

// load reads the sign-in; a missing file is (nil, nil).
func (t tokenStore) load() (*signIn, error) {
	b, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s signIn
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	return &s, nil
}

// save writes the sign-in whole (a temporary file renamed over the old
// one), readable by the user only.
func (t tokenStore) save(s *signIn) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(t.path, append(b, '\n'), 0o600)
}

// StampOf identifies the version of server's sign-in under dir (its file's
// modification time and size); none has the zero stamp.
func StampOf(dir, server string) Stamp { return tokenStore{TokenPath(dir, server)}.stamp() }

// stamp identifies the file's version (its modification time and size); a
// missing file has the zero stamp.
func (t tokenStore) stamp() Stamp {
	fi, err := os.Stat(t.path)
	if err != nil {
		return Stamp{}
	}
	return Stamp{fi.ModTime(), fi.Size()}
}

// Stamp is a sign-in file's version.
type Stamp struct {
	mod  time.Time
	size int64
}

// Logout forgets server's sign-in under dir; it reports whether there was one.
func Logout(dir, server string) (bool, error) {
	err := os.Remove(TokenPath(dir, server))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
