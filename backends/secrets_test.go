package backends_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// secretStore is a store of secrets for Options.Secret.
type secretStore struct {
	mu     sync.Mutex
	values map[string]string
}

func (s *secretStore) get(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[name]
	if !ok {
		return "", fmt.Errorf("secret %s is not set; set it with `mcp-gateway secret set %s`", name, name)
	}
	return v, nil
}

func (s *secretStore) set(name, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[name] = v
}

// loadServers loads servers from a configuration file's text, as the
// gateway does: only Load keeps secret references.
func loadServers(t *testing.T, text string) []config.Server {
	t.Helper()
	c, _, err := config.Load(config.LoadOptions{Path: "config.yaml", Data: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	return c.Servers
}

func envDigest(t *testing.T, e *env, server, name string) string {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(e.call(t, server, "env_digest", `{"name":"`+name+`"}`), &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("env_digest: %v", err)
	}
	return r.Content[0].Text
}

func sha(v string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(v))) }

// TestServerSecrets: a server's ${secret:NAME} gets the value when it
// starts (in its environment only: the configuration keeps the
// reference); a server whose secret is not set fails with an error naming
// it and how to set it, and the others start; Apply restarts exactly the
// servers whose secrets changed, and the one that failed once its secret
// is set.
func TestServerSecrets(t *testing.T) {
	t.Parallel()
	store := &secretStore{values: map[string]string{"a.TOKEN": "value-a-1", "shared": "s-1"}}
	text := `servers:
  - {name: a, command: ` + strconv.Quote(testbackend) + `, args: [-env-digest], restart: never, env: {TOKEN: "${secret:a.TOKEN}", BOTH: "x-${secret:shared}"}}
  - {name: b, command: ` + strconv.Quote(testbackend) + `, args: [-env-digest], restart: never, env: {TOKEN: "${secret:b.TOKEN}"}}
  - {name: plain, command: ` + strconv.Quote(testbackend) + `, args: [-env-digest], restart: never}
`
	servers := loadServers(t, text)
	e := start(t, servers, func(o *backends.Options) { o.Secret = store.get })
	e.waitState(t, "a", backends.Ready)
	e.waitState(t, "plain", backends.Ready)
	if got := envDigest(t, e, "a", "TOKEN"); got != sha("value-a-1") {
		t.Errorf("a's TOKEN: %s, want %s", got, sha("value-a-1"))
	}
	if got := envDigest(t, e, "a", "BOTH"); got != sha("x-s-1") {
		t.Errorf("a's BOTH: %s, want %s", got, sha("x-s-1"))
	}
	if servers[0].Env["TOKEN"] != "${secret:a.TOKEN}" {
		t.Errorf("the configuration holds %q, not the reference", servers[0].Env["TOKEN"])
	}
	b := e.waitState(t, "b", backends.Failed)
	if !strings.Contains(b.Error, "b.TOKEN is not set") || !strings.Contains(b.Error, "mcp-gateway secret set b.TOKEN") || !strings.Contains(b.Error, "env.TOKEN") {
		t.Errorf("b's error: %q", b.Error)
	}
	pidA, pidPlain := e.status(t, "a").PID, e.status(t, "plain").PID

	// Nothing changed: nothing restarts.
	if ch := e.Apply(loadServers(t, text)); !ch.Empty() {
		t.Errorf("Apply with the same secrets: %+v", ch)
	}
	store.set("b.TOKEN", "value-b-1")
	if ch := e.Apply(loadServers(t, text)); fmt.Sprint(ch.Restarted) != "[b]" || len(ch.Added)+len(ch.Removed) != 0 {
		t.Errorf("Apply after b's secret was set: %+v, want b restarted", ch)
	}
	e.waitState(t, "b", backends.Ready)
	if got := envDigest(t, e, "b", "TOKEN"); got != sha("value-b-1") {
		t.Errorf("b's TOKEN: %s", got)
	}
	store.set("shared", "s-2")
	if ch := e.Apply(loadServers(t, text)); fmt.Sprint(ch.Restarted) != "[a]" {
		t.Errorf("Apply after a's shared secret changed: %+v, want a restarted", ch)
	}
	e.waitState(t, "a", backends.Ready)
	if got := envDigest(t, e, "a", "BOTH"); got != sha("x-s-2") {
		t.Errorf("a's BOTH after the change: %s", got)
	}
	if e.status(t, "a").PID == pidA || e.status(t, "plain").PID != pidPlain {
		t.Errorf("pids: a %d→%d (want a new one), plain %d→%d (want the same)", pidA, e.status(t, "a").PID, pidPlain, e.status(t, "plain").PID)
	}
	for _, line := range e.log.Lines() {
		for _, v := range []string{"value-a-1", "value-b-1", "s-1", "s-2"} {
			if strings.Contains(fmt.Sprint(line), v) {
				t.Errorf("a log line holds a secret's value %q: %v", v, line)
			}
		}
	}
}

// TestServerSecretsNoStore: without Options.Secret a server that refers
// to a secret fails to start, saying why.
func TestServerSecretsNoStore(t *testing.T) {
	t.Parallel()
	e := start(t, loadServers(t, `servers: [{name: a, command: `+strconv.Quote(testbackend)+`, restart: never, args: ["--key=${secret:k}"]}]`), nil)
	if s := e.waitState(t, "a", backends.Failed); !strings.Contains(s.Error, "keeps no secrets") {
		t.Errorf("error %q", s.Error)
	}
}

// TestRemoteSecretHeader: a remote server's header that refers to a secret
// is sent with the value on every request; the configuration keeps the
// reference.
func TestRemoteSecretHeader(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "one"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var auth []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	store := &secretStore{values: map[string]string{"far.KEY": "remote-key-42"}}
	servers := loadServers(t, `servers: [{name: far, url: "`+hs.URL+`", restart: never, headers: {Authorization: "Bearer ${secret:far.KEY}"}}]`)
	e := start(t, servers, func(o *backends.Options) { o.Secret = store.get })
	e.waitState(t, "far", backends.Ready)
	if res := e.call(t, "far", "one", `{}`); !strings.Contains(string(res), `"hi"`) {
		t.Errorf("one: %s", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 {
		t.Fatal("no request")
	}
	for i, a := range auth {
		if a != "Bearer remote-key-42" {
			t.Errorf("request %d: Authorization %q", i, a)
		}
	}
	if servers[0].Headers["Authorization"] != "Bearer ${secret:far.KEY}" {
		t.Errorf("the configuration holds %q", servers[0].Headers["Authorization"])
	}
}

// TestServerSecretsMaskedInStderr: what a server writes to stderr is
// logged and kept with its own secrets' values masked, even a value of no
// known shape (the server may echo its key in an error).
func TestServerSecretsMaskedInStderr(t *testing.T) {
	t.Parallel()
	const value = "plain-words-secret"
	store := &secretStore{values: map[string]string{"k": value, "short": "abc"}}
	servers := loadServers(t, `servers: [{name: a, command: `+strconv.Quote(testbackend)+`, restart: never,
  args: ["-stderr-text", "connecting with ${secret:k} as ${secret:short}"]}]`)
	e := start(t, servers, func(o *backends.Options) { o.Secret = store.get })
	e.waitState(t, "a", backends.Ready)
	var logged string
	testutil.WaitFor(t, testutil.DefaultTimeout, "the stderr line logged", func() bool {
		for _, line := range e.log.Lines() {
			if s := fmt.Sprint(line); strings.Contains(s, "connecting with") {
				logged = s
				return true
			}
		}
		return false
	})
	if strings.Contains(logged, value) || !strings.Contains(logged, "connecting with *** as abc") {
		t.Errorf("logged %q", logged)
	}
	tail := strings.Join(e.status(t, "a").StderrTail, "\n")
	if strings.Contains(tail, value) || !strings.Contains(tail, "connecting with *** as abc") {
		t.Errorf("stderr tail %q", tail)
	}
}

// TestRemoteEchoesSecretHeader: a remote server that answers initialize
// with an error quoting the Authorization header it got fails, and neither
// its reason (status, clients' errors) nor the log holds the secret.
func TestRemoteEchoesSecretHeader(t *testing.T) {
	t.Parallel()
	const value = "remote-key-echoed-42"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		msg, _ := json.Marshal("refused: " + r.Header.Get("Authorization"))
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":%s}}`, req.ID, msg)
	}))
	t.Cleanup(hs.Close)
	store := &secretStore{values: map[string]string{"far.KEY": value}}
	servers := loadServers(t, `servers: [{name: far, url: "`+hs.URL+`", restart: never, headers: {Authorization: "Bearer ${secret:far.KEY}"}}]`)
	e := start(t, servers, func(o *backends.Options) { o.Secret = store.get })
	st := e.waitState(t, "far", backends.Failed)
	if !strings.Contains(st.Error, "refused: Bearer ***") {
		t.Errorf("reason %q, want the server's error with the value masked", st.Error)
	}
	for _, line := range e.log.Lines() {
		if s := fmt.Sprint(line); strings.Contains(s, value) {
			t.Errorf("logged %q", s)
		}
	}
}
