package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
)

// DefaultURL is the official registry (gateway.registry.url's default).
const DefaultURL = "https://registry.modelcontextprotocol.io"

// Bounds of one exchange with the registry.
const (
	// DefaultTimeout bounds one request, from dialling to the end of the body.
	DefaultTimeout = 15 * time.Second
	// MaxResponse bounds a response body; a registry page is tens of KiB.
	MaxResponse = 4 << 20
	// MaxPages bounds how many pages a search follows (cursor pagination).
	MaxPages = 10
	// PageSize is the limit asked for per page.
	PageSize = 50
)

// Client reads one registry. The zero value is not usable: BaseURL is
// required.
type Client struct {
	// BaseURL is the registry's root, such as DefaultURL or a mirror.
	BaseURL string
	// HTTP sends the requests; nil means a client with DefaultTimeout.
	HTTP *http.Client
	// Cache, when not nil, keeps each answer so that a registry that
	// cannot be reached is answered for from the last fetch.
	Cache *Cache
}

// Error is a failure to get an answer from the registry: what was asked
// and why it failed, in words for the user.
type Error struct {
	URL string
	Msg string
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("registry %s: %s", e.URL, e.Msg) }
func (e *Error) Unwrap() error { return e.Err }

// ErrNotFound is wrapped by the errors of a name or version the registry
// does not have.
var ErrNotFound = errors.New("not found")

// unreachable is wrapped by errors for which the cache may answer
// instead: no connection, a timeout, a 5xx.
var errUnreachable = errors.New("unreachable")

// Answer is what a call got: from the registry, or from the cache when
// the registry could not be reached (Offline, with the time of that fetch
// and why the registry failed).
type Answer struct {
	Offline   bool
	FetchedAt time.Time
	Cause     error // why the registry was not asked, when Offline
}

// Search lists the latest version of each server whose name matches text,
// following the registry's cursor over up to MaxPages pages.
func (c *Client) Search(ctx context.Context, text string) ([]ServerResponse, Answer, error) {
	var all []ServerResponse
	var ans Answer
	cursor := ""
	for page := 0; page < MaxPages; page++ {
		q := url.Values{"version": {"latest"}, "limit": {fmt.Sprint(PageSize)}}
		if text != "" {
			q.Set("search", text)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var list ServerList
		a, err := c.get(ctx, "/v0.1/servers?"+q.Encode(), &list)
		if err != nil {
			return nil, ans, err
		}
		if a.Offline && !ans.Offline {
			ans = a
		}
		all = append(all, list.Servers...)
		if list.Metadata.NextCursor == "" || list.Metadata.NextCursor == cursor {
			break
		}
		cursor = list.Metadata.NextCursor
	}
	return all, ans, nil
}

// Get is one version of a server ("latest" for the newest). A name or
// version the registry does not have is an error wrapping ErrNotFound
// that says which, with the versions there are.
func (c *Client) Get(ctx context.Context, name, version string) (*ServerResponse, Answer, error) {
	if version == "" {
		version = "latest"
	}
	var r ServerResponse
	ans, err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version), &r)
	if errors.Is(err, ErrNotFound) {
		versions, _, verr := c.Versions(ctx, name)
		switch {
		case errors.Is(verr, ErrNotFound) || (verr == nil && len(versions) == 0):
			return nil, ans, &Error{URL: c.BaseURL, Msg: fmt.Sprintf("no server named %q (mcp-gateway search finds names)", name), Err: ErrNotFound}
		case verr == nil:
			return nil, ans, &Error{URL: c.BaseURL, Msg: fmt.Sprintf("%s has no version %q; it has %s", name, version, strings.Join(versions, ", ")), Err: ErrNotFound}
		}
		return nil, ans, err
	}
	if err != nil {
		return nil, ans, err
	}
	if r.Server.Name != name {
		return nil, ans, &Error{URL: c.BaseURL, Msg: fmt.Sprintf("asked for %s, answered with %q", name, r.Server.Name)}
	}
	return &r, ans, nil
}

// Versions lists the versions the registry has of a server.
func (c *Client) Versions(ctx context.Context, name string) ([]string, Answer, error) {
	var list ServerList
	ans, err := c.get(ctx, "/v0.1/servers/"+url.PathEscape(name)+"/versions", &list)
	if err != nil {
		return nil, ans, err
	}
	var vs []string
	for _, s := range list.Servers {
		vs = append(vs, s.Server.Version)
	}
	return vs, ans, nil
}

// get fetches path into v. A registry that cannot be reached is answered
// for from the cache when it holds path.
func (c *Client) get(ctx context.Context, path string, v any) (Answer, error) {
	u := strings.TrimSuffix(c.BaseURL, "/") + path
	body, err := c.fetch(ctx, u)
	ans := Answer{}
	if errors.Is(err, errUnreachable) && c.Cache != nil {
		if cached, at, ok := c.Cache.Get(u); ok {
			body, ans = cached, Answer{Offline: true, FetchedAt: at, Cause: err}
			err = nil
		}
	}
	if err != nil {
		return ans, err
	}
	if err := decodeStrict(body, v); err != nil {
		return ans, &Error{URL: c.BaseURL, Msg: "the answer is not a registry response (" + err.Error() + "); is gateway.registry.url the registry's root?", Err: err}
	}
	if !ans.Offline && c.Cache != nil {
		c.Cache.Put(u, body) // best effort: a cache that cannot be written is no cache
	}
	return ans, nil
}

// fetch GETs u, bounded in time (the client's timeout) and size.
func (c *Client) fetch(ctx context.Context, u string) ([]byte, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &Error{URL: c.BaseURL, Msg: "bad URL: " + err.Error(), Err: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		msg := "cannot be reached: " + err.Error()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			msg = fmt.Sprintf("did not answer within %s", timeoutOf(hc))
		}
		if ctx.Err() != nil {
			return nil, &Error{URL: c.BaseURL, Msg: "interrupted", Err: ctx.Err()}
		}
		return nil, &Error{URL: c.BaseURL, Msg: msg, Err: errors.Join(errUnreachable, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, &Error{URL: c.BaseURL, Msg: "reading the answer: " + err.Error(), Err: errors.Join(errUnreachable, err)}
	}
	if len(body) > MaxResponse {
		return nil, &Error{URL: c.BaseURL, Msg: fmt.Sprintf("the answer is larger than %d MiB", MaxResponse>>20)}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, &Error{URL: c.BaseURL, Msg: "not found: " + u, Err: ErrNotFound}
	case resp.StatusCode >= 500:
		return nil, &Error{URL: c.BaseURL, Msg: "answered " + resp.Status, Err: errUnreachable}
	case resp.StatusCode != http.StatusOK:
		return nil, &Error{URL: c.BaseURL, Msg: "answered " + resp.Status}
	}
	return body, nil
}

func timeoutOf(hc *http.Client) time.Duration {
	if hc.Timeout > 0 {
		return hc.Timeout
	}
	return DefaultTimeout
}

// decodeStrict decodes one JSON object into v: a body that is not one
// (HTML of a proxy's error page, a truncated answer) is an error.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Cache keeps the registry's answers on disk, one file per URL, bounded in
// entries and bytes (the oldest go first), so that search and add work
// from the last fetch when the registry cannot be reached.
type Cache struct {
	Dir        string
	MaxEntries int   // 0 means 256
	MaxBytes   int64 // 0 means 32 MiB
}

type cacheEntry struct {
	URL       string          `json:"url"`
	FetchedAt time.Time       `json:"fetched_at"`
	Body      json.RawMessage `json:"body"`
}

func (c *Cache) file(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Get is the cached answer for u and when it was fetched.
func (c *Cache) Get(u string) ([]byte, time.Time, bool) {
	data, err := os.ReadFile(c.file(u))
	if err != nil {
		return nil, time.Time{}, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.URL != u {
		return nil, time.Time{}, false
	}
	return e.Body, e.FetchedAt, true
}

// Put stores body as u's answer, then trims the cache to its bounds.
func (c *Cache) Put(u string, body []byte) error {
	if !json.Valid(body) {
		return errors.New("not JSON")
	}
	data, err := json.Marshal(cacheEntry{URL: u, FetchedAt: time.Now().UTC(), Body: body})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(c.file(u), data, 0o600); err != nil {
		return err
	}
	return c.trim()
}

// trim removes the oldest entries beyond the bounds.
func (c *Cache) trim() error {
	maxEntries, maxBytes := c.MaxEntries, c.MaxBytes
	if maxEntries <= 0 {
		maxEntries = 256
	}
	if maxBytes <= 0 {
		maxBytes = 32 << 20
	}
	des, err := os.ReadDir(c.Dir)
	if err != nil {
		return err
	}
	type file struct {
		name string
		mod  time.Time
		size int64
	}
	var files []file
	var total int64
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		files = append(files, file{de.Name(), fi.ModTime(), fi.Size()})
		total += fi.Size()
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	for len(files) > 0 && (len(files) > maxEntries || total > maxBytes) {
		os.Remove(filepath.Join(c.Dir, files[0].name))
		total -= files[0].size
		files = files[1:]
	}
	return nil
}
