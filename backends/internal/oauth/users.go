package oauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
	"golang.org/x/oauth2"
)

// Users keeps the per-person sign-ins of per_user_login servers: each
// caller of the gateway (a principal key, "SUBJECT@ISSUER") signs in to the
// upstream once, through the gateway's own callback, and its tokens are kept
// for that caller alone, refreshed before they expire, and revocable.
//
// A sign-in is kept as tokenstore.go keeps `login`'s — a file readable by
// the user only, replaced whole — under DIR/users/SERVER/, one file per
// caller named by a digest of the caller's key (the key itself is inside).
//
// The flow is bound by sealed values (AES-256-GCM with a key the replicas
// share), not by memory: the link a caller is given names the caller and the
// server and expires; the authorization request's state carries the flow
// (PKCE verifier, caller, server, the browser's nonce digest), so that any
// replica can complete it.
type Users struct {
	dir      string // DIR/users
	redirect string // the gateway's callback, as the authorization server sees it
	aead     cipher.AEAD
	hc       *http.Client
	log      *slog.Logger
	now      func() time.Time
	// lastMilli is the latest moment handed out (milli): a link issued, a
	// flow begun and a sign-in completed are ordered by them (usedBy).
	lastMilli atomic.Int64

	discoverMu sync.Mutex // one discovery at a time (users_upstream.go)

	mu      sync.Mutex
	servers map[string]*upstream // discovery and client registration, by server
	entries map[userKey]*userEntry
}

// UsersOptions configure Users.
type UsersOptions struct {
	// TokenDir is where sign-ins are kept (as for login).
	TokenDir string
	// Callback is the gateway's redirect URI (BASE/upstream/callback).
	Callback string
	// Key seals links and flow states; the replicas of a deployment share it
	// (gateway.http.state_key_env). nil: a key of this process's own.
	Key    []byte
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Lifetimes of what the flow hands out.
const (
	// LinkLifetime is how long a sign-in link stays good: long enough to
	// read an error and open it, short enough that an old one found in a
	// log or a chat is of no use.
	LinkLifetime = 15 * time.Minute
	// flowLifetime bounds the time at the authorization server.
	flowLifetime = 10 * time.Minute
	// refreshEarly is how long before its expiry a token is refreshed:
	// a call never sends a token about to lapse on its way.
	refreshEarly = 30 * time.Second
)

// NewUsers returns the per-person sign-ins kept under o.TokenDir.
func NewUsers(o UsersOptions) *Users {
	key := o.Key
	if key == nil {
		key = []byte(rand.Text())
	}
	sum := sha256.Sum256(append([]byte("mcp-gateway upstream sign-in\x00"), key...))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	// Each request to the authorization server is bounded: a sign-in or a
	// refresh that hangs fails instead of holding its callers.
	hc := &http.Client{Timeout: 30 * time.Second}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Users{dir: filepath.Join(o.TokenDir, "users"), redirect: o.Callback, aead: aead, hc: hc, log: log, now: now,
		servers: map[string]*upstream{}, entries: map[userKey]*userEntry{}}
}

// ErrNotSignedIn is what Token returns for a caller without a usable
// sign-in (none, signed out, or refused at refresh).
var ErrNotSignedIn = errors.New("not signed in")

// userSignIn is one caller's sign-in to one server, as stored.
type userSignIn struct {
	Caller string `json:"caller"` // the principal key, SUBJECT@ISSUER
	signIn
	Issuer     string `json:"issuer,omitempty"`
	Revocation string `json:"revocation_url,omitempty"`
	// At is when the sign-in completed (Unix milliseconds): a link issued,
	// or a flow begun, before it is spent (usedBy).
	At int64 `json:"signed_in_at,omitempty"`
}

type userKey struct{ server, caller string }

// userEntry is one (server, caller)'s sign-in in memory; mu makes its
// refreshes single-flight.
type userEntry struct {
	mu    sync.Mutex
	si    *userSignIn
	stamp Stamp
}

// path is the file of caller's sign-in to server.
func (u *Users) path(server, caller string) string {
	sum := sha256.Sum256([]byte(caller))
	return filepath.Join(u.dir, server, hex.EncodeToString(sum[:16])+".json")
}

// entry returns the entry of caller's sign-in to server. Entries are made
// only for callers who have (or had) a sign-in (known): a caller without
// one, calling again and again, costs a stat, not memory.
func (u *Users) entry(server, caller string) *userEntry {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := userKey{server, caller}
	e := u.entries[k]
	if e == nil {
		e = &userEntry{}
		u.entries[k] = e
	}
	return e
}

// known reports whether caller may have a sign-in to server: an entry, or
// a file.
func (u *Users) known(server, caller string) bool {
	u.mu.Lock()
	_, ok := u.entries[userKey{server, caller}]
	u.mu.Unlock()
	return ok || tokenStore{u.path(server, caller)}.stamp() != Stamp{}
}

// load reads the stored sign-in into e when the file changed since (a
// sign-in, a logout by another process); e.mu is held.
func (u *Users) load(e *userEntry, server, caller string) error {
	p := u.path(server, caller)
	st := tokenStore{p}.stamp()
	if st == e.stamp && (st != Stamp{}) {
		return nil
	}
	e.si, e.stamp = nil, st
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var si userSignIn
	if err := json.Unmarshal(b, &si); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if si.Caller != caller || si.Token == nil {
		return nil // another caller's digest collision, or an empty record: not this caller's
	}
	e.si = &si
	return nil
}

// save writes e's sign-in; e.mu is held.
func (u *Users) save(e *userEntry, server string, si *userSignIn) error {
	p := u.path(server, si.Caller)
	b, err := json.MarshalIndent(si, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(p, append(b, '\n'), 0o600); err != nil {
		return err
	}
	e.si, e.stamp = si, tokenStore{p}.stamp()
	return nil
}

// SignedIn reports whether caller has a stored sign-in to s.
func (u *Users) SignedIn(s config.Server, caller string) bool {
	if !u.known(s.Name, caller) {
		return false
	}
	e := u.entry(s.Name, caller)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := u.load(e, s.Name, caller); err != nil {
		return false
	}
	return e.si != nil && e.si.URL == s.URL
}

// Token returns caller's access token for s and its expiry, refreshed when
// it is about to expire: one refresh per (server, caller) at a time, the
// others waiting for it. A caller without a sign-in, or whose refresh the
// authorization server refused, gets ErrNotSignedIn.
func (u *Users) Token(ctx context.Context, s config.Server, caller string) (string, time.Time, error) {
	if !u.known(s.Name, caller) {
		return "", time.Time{}, ErrNotSignedIn
	}
	e := u.entry(s.Name, caller)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := u.load(e, s.Name, caller); err != nil {
		return "", time.Time{}, fmt.Errorf("read the sign-in: %w", err)
	}
	si := e.si
	if si == nil || si.URL != s.URL {
		return "", time.Time{}, ErrNotSignedIn
	}
	tok := si.Token
	if tok.Expiry.IsZero() || u.now().Add(refreshEarly).Before(tok.Expiry) {
		return tok.AccessToken, tok.Expiry, nil
	}
	if tok.RefreshToken == "" {
		if u.now().Before(tok.Expiry) {
			return tok.AccessToken, tok.Expiry, nil // good to its end, then a sign-in
		}
		return "", time.Time{}, ErrNotSignedIn
	}
	// A token with no access token is refreshed at once by oauth2.
	hctx := context.WithValue(ctx, oauth2.HTTPClient, u.hc)
	nt, err := si.config().TokenSource(hctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			// Another replica sharing the directory may have refreshed
			// first, with a refresh token that rotated: its sign-in
			// stands.
			if u.load(e, s.Name, caller) == nil && e.si != nil && e.si.Token.RefreshToken != tok.RefreshToken &&
				u.now().Before(e.si.Token.Expiry) {
				return e.si.Token.AccessToken, e.si.Token.Expiry, nil
			}
			// The grant is refused: the sign-in is of no use any more.
			u.log.Warn("the upstream refused a caller's refresh; they must sign in again", "server", s.Name, "error_code", re.ErrorCode)
			_ = os.Remove(u.path(s.Name, caller))
			e.si, e.stamp = nil, Stamp{}
			return "", time.Time{}, ErrNotSignedIn
		}
		return "", time.Time{}, &RefreshError{err}
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = tok.RefreshToken // RFC 6749 6: the old one stays good
	}
	next := *si
	next.Token = nt
	if err := u.save(e, s.Name, &next); err != nil {
		u.log.Warn("cannot store a refreshed sign-in", "server", s.Name, "err", err)
		e.si = &next
	}
	return nt.AccessToken, nt.Expiry, nil
}

// Logout forgets caller's sign-in to server and revokes its tokens at the
// upstream's revocation endpoint (RFC 7009), if it advertised one. It
// reports whether there was a sign-in; a failed revocation is reported
// after the sign-in is forgotten.
func (u *Users) Logout(ctx context.Context, server, caller string) (bool, error) {
	e := u.entry(server, caller)
	e.mu.Lock()
	defer e.mu.Unlock()
	err := u.load(e, server, caller)
	si := e.si
	if rerr := os.Remove(u.path(server, caller)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return si != nil, rerr
	}
	e.si, e.stamp = nil, Stamp{}
	if si == nil {
		return false, err
	}
	return true, u.revoke(ctx, si)
}

// Callers returns the callers with a sign-in to server whose key is who,
// or whose subject (the key before its last "@") is who.
func (u *Users) Callers(server, who string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(u.dir, server))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".json") || de.Name() == clientFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(u.dir, server, de.Name()))
		if err != nil {
			continue
		}
		var si userSignIn
		if json.Unmarshal(b, &si) != nil || si.Caller == "" {
			continue
		}
		sub := si.Caller
		if i := strings.LastIndex(sub, "@"); i > 0 {
			sub = sub[:i]
		}
		if si.Caller == who || sub == who {
			out = append(out, si.Caller)
		}
	}
	return out, nil
}

// revoke revokes the refresh token and the access token (RFC 7009).
func (u *Users) revoke(ctx context.Context, si *userSignIn) error {
	if si.Revocation == "" {
		return nil
	}
	var errs []error
	for _, t := range []struct{ tok, hint string }{{si.Token.RefreshToken, "refresh_token"}, {si.Token.AccessToken, "access_token"}} {
		if t.tok == "" {
			continue
		}
		// The client authenticates as at the token endpoint (RFC 7009 2.1).
		form := url.Values{"token": {t.tok}, "token_type_hint": {t.hint}}
		basic := si.ClientSecret != "" && si.AuthStyle != oauth2.AuthStyleInParams
		if !basic {
			form.Set("client_id", si.ClientID)
			if si.ClientSecret != "" {
				form.Set("client_secret", si.ClientSecret)
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, si.Revocation, strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		if basic {
			req.SetBasicAuth(url.QueryEscape(si.ClientID), url.QueryEscape(si.ClientSecret))
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := u.hc.Do(req)
		if err != nil {
			errs = append(errs, fmt.Errorf("revoke the %s: %w", t.hint, err))
			continue
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			errs = append(errs, fmt.Errorf("revoke the %s: %s answered %s", t.hint, si.Revocation, resp.Status))
		}
	}
	return errors.Join(errs...)
}

// A link names who may sign in to which server, until when.
type link struct {
	Kind    string `json:"k"` // "link"
	Server  string `json:"s"`
	Caller  string `json:"c"`
	Expires int64  `json:"e"`
	Issued  int64  `json:"i"` // Unix milliseconds (usedBy)
}

// A flow is an authorization request in flight, carried in its state.
type flow struct {
	Kind     string `json:"k"` // "flow"
	Server   string `json:"s"`
	Caller   string `json:"c"`
	Expires  int64  `json:"e"`
	Verifier string `json:"v"` // PKCE
	Browser  []byte `json:"b"` // SHA-256 of the browser's nonce (its cookie)
	Issuer   string `json:"i,omitempty"`
	Begun    int64  `json:"t"` // Unix milliseconds (usedBy)
}

// Link returns the sealed state of a sign-in link for caller to server.
func (u *Users) Link(server, caller string) string {
	now := u.now()
	return u.seal(link{Kind: "link", Server: server, Caller: caller, Expires: now.Add(LinkLifetime).Unix(), Issued: u.milli()})
}

// OpenLink returns the caller a link's state names for server; an expired,
// altered or foreign one, or one for another server, is an error.
func (u *Users) OpenLink(server, state string) (caller string, err error) {
	var l link
	if err := u.open(state, &l); err != nil || l.Kind != "link" {
		return "", errors.New("this sign-in link is not one this gateway issued")
	}
	if l.Server != server {
		return "", errors.New("this sign-in link is for another server")
	}
	if u.now().Unix() > l.Expires {
		return "", errors.New("this sign-in link has expired: call the tool again for a new one")
	}
	if u.usedBy(server, l.Caller, l.Issued) {
		return "", errors.New("this sign-in link was used: the person signed in since it was given (call the tool again, or open the dashboard, for a new one)")
	}
	return l.Caller, nil
}

// Begin starts caller's sign-in to s: it finds the upstream's authorization
// server (and registers the gateway with it, once per server), and returns
// the authorization URL to send the browser to. browser is a nonce the
// browser keeps (a cookie): only the browser that began the flow completes
// it.
func (u *Users) Begin(ctx context.Context, s config.Server, caller, browser string) (string, error) {
	up, err := u.upstream(ctx, s)
	if err != nil {
		return "", err
	}
	verifier := oauth2.GenerateVerifier()
	nonce := sha256.Sum256([]byte(browser))
	state := u.seal(flow{Kind: "flow", Server: s.Name, Caller: caller, Expires: u.now().Add(flowLifetime).Unix(),
		Verifier: verifier, Browser: nonce[:], Issuer: up.Issuer, Begun: u.milli()})
	return up.config(u.redirect).AuthCodeURL(state, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("resource", up.Resource)), nil
}

// Complete ends a sign-in at the callback: state and code are the
// authorization response's, iss its issuer (RFC 9207; "" if not sent),
// browser the nonce Begin was given. It exchanges the code and stores the
// tokens for the caller the flow was begun for, whom it returns.
func (u *Users) Complete(ctx context.Context, s func(name string) (config.Server, bool), state, code, iss, browser string) (server, caller string, err error) {
	var f flow
	if err := u.open(state, &f); err != nil || f.Kind != "flow" {
		return "", "", errors.New("this response does not belong to a sign-in this gateway began")
	}
	nonce := sha256.Sum256([]byte(browser))
	if subtle.ConstantTimeCompare(nonce[:], f.Browser) != 1 {
		return f.Server, "", errors.New("this sign-in was begun in another browser: begin it again from the link, in this browser")
	}
	if u.now().Unix() > f.Expires {
		return f.Server, "", errors.New("this sign-in took too long: begin it again from the link")
	}
	if iss != "" && f.Issuer != "" && iss != f.Issuer {
		return f.Server, "", errors.New("the response comes from another authorization server than the sign-in was sent to")
	}
	if u.usedBy(f.Server, f.Caller, f.Begun) {
		return f.Server, "", errors.New("the person signed in since this sign-in was begun: begin it again from a new link")
	}
	srv, ok := s(f.Server)
	if !ok {
		return f.Server, "", fmt.Errorf("%s is no longer a per_user_login server", f.Server)
	}
	up, err := u.upstream(ctx, srv)
	if err != nil {
		return f.Server, "", err
	}
	cfg := up.config(u.redirect)
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, u.hc), code, oauth2.VerifierOption(f.Verifier),
		oauth2.SetAuthURLParam("resource", up.Resource))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return f.Server, "", fmt.Errorf("the authorization server refused the code (%s)", re.ErrorCode)
		}
		return f.Server, "", fmt.Errorf("exchange the code: %w", err)
	}
	si := &userSignIn{Caller: f.Caller, Issuer: up.Issuer, Revocation: up.Revocation, At: u.milli(), signIn: signIn{
		URL: srv.URL, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AuthURL: cfg.Endpoint.AuthURL,
		TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle, Scopes: cfg.Scopes, Token: tok,
	}}
	e := u.entry(f.Server, f.Caller)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := u.save(e, f.Server, si); err != nil {
		return f.Server, "", fmt.Errorf("store the sign-in: %w", err)
	}
	u.log.Info("a caller signed in to a per_user_login server", "server", f.Server, "caller", f.Caller)
	return f.Server, f.Caller, nil
}

// milli is the time in Unix milliseconds, one more than the last it gave
// when the clock has not moved on: events that happen within one
// millisecond (a sign-in, and a flow begun at once after it) still have
// an order, which usedBy compares.
func (u *Users) milli() int64 {
	for {
		last := u.lastMilli.Load()
		next := max(u.now().UnixMilli(), last+1)
		if u.lastMilli.CompareAndSwap(last, next) {
			return next
		}
	}
}

// usedBy reports whether caller signed in to server at or after since
// (Users.milli): a link issued, or a flow begun, then is spent. A
// link serves one sign-in, so whoever finds it afterwards (a browser's
// history, a chat it was pasted in) cannot bind an account of theirs to
// the person, replacing the person's own.
func (u *Users) usedBy(server, caller string, since int64) bool {
	if !u.known(server, caller) {
		return false
	}
	e := u.entry(server, caller)
	e.mu.Lock()
	defer e.mu.Unlock()
	return u.load(e, server, caller) == nil && e.si != nil && e.si.At >= since
}

func (u *Users) seal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs
	}
	nonce := make([]byte, u.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(u.aead.Seal(nonce, nonce, b, nil))
}

func (u *Users) open(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < u.aead.NonceSize() {
		return errors.New("malformed")
	}
	n := u.aead.NonceSize()
	plain, err := u.aead.Open(nil, b[:n], b[n:], nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(plain, v)
}
