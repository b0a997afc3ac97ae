package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
	"github.com/mcp-gateway/mcp-gateway/gateway/internal/streamhttp"
)

// initializeTS is the initialize the TypeScript SDK's client sends (its
// capabilities as a client with elicitation, sampling and roots has them).
const initializeTS = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
	`"capabilities":{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true}},` +
	`"clientInfo":{"name":"claude-ai","version":"0.1.0"}}}`

// sealedState is the state of a session initialized with initializeTS by
// the caller whose identity is who.
func sealedState(g *Gateway, who string, now time.Time) *sessionState {
	return g.stateOf(readMsg([]byte(initializeTS)).Params, who, "", now)
}

// TestSessionSealOpen: a sealed session id opens, on a replica with the
// key, to the state it was sealed with, for its caller and profile only,
// until it expires; an id of another key does not. Key rotation: of the
// keys state_key_env lists, the first seals, every one opens. The id of a
// typical client is a few hundred bytes. (The id's format, and what
// altering it does: streamhttp's TestSealerOpensWhatItSealed.)
func TestSessionSealOpen(t *testing.T) {
	g := New(Options{})
	now := time.Unix(1_800_000_000, 0)
	a := newSessionSealer("replica-a", [][]byte{[]byte("key-one")})
	st := sealedState(g, "alice@issuer", now)
	id := a.seal(st)
	t.Logf("sealed id: %d bytes", len(id))
	if !strings.HasPrefix(id, "replica-a.s1") || len(id) > 400 {
		t.Fatalf("id %q (%d bytes): want the replica's name first, and a few hundred bytes", id, len(id))
	}
	b := newSessionSealer("replica-b", [][]byte{[]byte("key-one")})
	got, issuer, err := b.open(id, "alice@issuer", "", now.Add(time.Hour))
	if err != nil || issuer != "replica-a" {
		t.Fatalf("open on another replica: %v, issuer %q", err, issuer)
	}
	want, _ := json.Marshal(st)
	if js, _ := json.Marshal(got); !bytes.Equal(js, want) {
		t.Fatalf("opened\n%s\nwant\n%s", js, want)
	}
	if got.Version != "2025-11-25" || got.Client != "claude-ai" || got.MaxTools == 0 && g.maxToolsFor("claude-ai") != 0 {
		t.Fatalf("state %+v", got)
	}

	for _, c := range []struct {
		name    string
		s       *sessionSealer
		id, who string
		profile string
		at      time.Time
		err     error
	}{
		{"another caller", b, id, "mallory@issuer", "", now, errSealedCaller},
		{"anonymous", b, id, "", "", now, errSealedCaller},
		{"another profile", b, id, "alice@issuer", "ops", now, errSealedProfile},
		{"expired", b, id, "alice@issuer", "", now.Add(sessionLifetime + time.Second), errSealedExpired},
		{"another key", newSessionSealer("replica-b", [][]byte{[]byte("key-two")}), id, "alice@issuer", "", now, streamhttp.ErrKey},
	} {
		if _, _, err := c.s.open(c.id, c.who, c.profile, c.at); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}

	// Rotation: a replica with the new key first and the old one after
	// opens ids of both and seals with the new one; a replica that has
	// only the old key cannot open the new ids.
	rotated := newSessionSealer("replica-b", splitKeys([]byte(" key-two , key-one ")))
	if _, _, err := rotated.open(id, "alice@issuer", "", now); err != nil {
		t.Fatalf("an id of the old key on a rotated replica: %v", err)
	}
	fresh := rotated.seal(st)
	if _, _, err := rotated.open(fresh, "alice@issuer", "", now); err != nil {
		t.Fatalf("an id of the new key: %v", err)
	}
	if _, _, err := b.open(fresh, "alice@issuer", "", now); !errors.Is(err, streamhttp.ErrKey) {
		t.Fatalf("a new id on a replica with the old key only: %v", err)
	}

	// A client that declares kilobytes gets no sealed id (too large for
	// a header): the front gives it a random one.
	big := *st
	big.Caps = json.RawMessage(`{"experimental":{"x":"` + rand.Text() + base64.StdEncoding.EncodeToString(random(3000)) + `"}}`)
	if long := a.seal(&big); long != "" {
		t.Fatalf("a state of %d bytes sealed to an id of %d", len(big.Caps), len(long))
	}
}

// random returns n random bytes: what does not compress.
func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// keyID is the id of the key that sealed a session id.
func keyID(sid string) string {
	_, rest, _ := strings.Cut(sid, ".s1")
	kid, _, _ := strings.Cut(rest, ".")
	return kid
}

// sealedFront is one replica's HTTP front with a shared key.
func sealedFront(t *testing.T, replica, keys string) *HTTPFront {
	t.Helper()
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	g := New(Options{Config: cfg, StateKey: []byte(keys)})
	h := g.NewHTTPFront(HTTPOptions{Replica: replica})
	t.Cleanup(h.Close)
	return h
}

// sealedDo sends one request to h as caller p, and returns the answer.
func sealedDo(h *HTTPFront, p *authn.Principal, method, sid, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(sessionIDHeader, sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if p != nil {
		req = req.WithContext(WithPrincipal(req.Context(), p))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestSealedSessionAnyReplica: with a shared key, a session initialized
// on one replica is served by another from its id alone (its POSTs), and
// what needs the issuing replica is refused there with a reason that
// names it: a GET (405), the client's answer to a request (421), a
// resource subscription (JSON-RPC error). Another caller's, an altered
// or a deleted id gets 404; a replica with a rotated key serves it; a
// front without a key issues random ids, as before.
func TestSealedSessionAnyReplica(t *testing.T) {
	alice := &authn.Principal{Key: "alice@op", Identity: policy.Identity{Auth: "oauth", Subject: "alice"}}
	mallory := &authn.Principal{Key: "mallory@op", Identity: policy.Identity{Auth: "oauth", Subject: "mallory"}}
	a := sealedFront(t, "gw-a", "shared-key")
	b := sealedFront(t, "gw-b", "shared-key")

	init := sealedDo(a, alice, http.MethodPost, "", initializeTS)
	sid := init.Header().Get(sessionIDHeader)
	if init.Code != http.StatusOK || !strings.HasPrefix(sid, "gw-a.") || init.Header().Get(replicaHeader) != "gw-a" {
		t.Fatalf("initialize: %d, id %q, replica %q: %s", init.Code, sid, init.Header().Get(replicaHeader), init.Body)
	}
	t.Logf("session id of the TypeScript SDK's initialize: %d bytes", len(sid))

	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if w := sealedDo(b, alice, http.MethodPost, sid, list); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"tools":[]`) || w.Header().Get(replicaHeader) != "gw-b" {
		t.Fatalf("tools/list on the other replica: %d %s", w.Code, w.Body)
	}
	b.mu.Lock()
	s := b.sessions[sid]
	b.mu.Unlock()
	if s == nil || s.issuer != "gw-a" || s.front.Load().declared().client != "claude-ai" || !s.front.Load().initialized.Load() {
		t.Fatalf("the other replica's copy: %+v", s)
	}
	// The copy's front declares what the issuer's does, field for field
	// (a field of declared not sealed would differ here).
	a.mu.Lock()
	issued := a.sessions[sid].front.Load().declared()
	a.mu.Unlock()
	if copied := s.front.Load().declared(); !reflect.DeepEqual(copied, issued) {
		t.Fatalf("the copy declares\n%+v\nthe issuer\n%+v", copied, issued)
	}
	if w := sealedDo(b, alice, http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); w.Code != http.StatusAccepted {
		t.Fatalf("initialized on the copy: %d %s", w.Code, w.Body)
	}
	if w := sealedDo(b, alice, http.MethodGet, sid, ""); w.Code != http.StatusMethodNotAllowed || !strings.Contains(w.Body.String(), `replica "gw-a"`) {
		t.Fatalf("GET on the copy: %d %s", w.Code, w.Body)
	}
	if w := sealedDo(b, alice, http.MethodPost, sid, `{"jsonrpc":"2.0","id":7,"result":{}}`); w.Code != http.StatusMisdirectedRequest || !strings.Contains(w.Body.String(), `replica "gw-a"`) {
		t.Fatalf("an answer on the copy: %d %s", w.Code, w.Body)
	}
	if w := sealedDo(b, alice, http.MethodPost, sid, `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"x:/y"}}`); !strings.Contains(w.Body.String(), `"error"`) || !strings.Contains(w.Body.String(), `issued this session (\"gw-a\")`) {
		t.Fatalf("subscribe on the copy: %d %s", w.Code, w.Body)
	}

	c := sealedFront(t, "gw-c", "shared-key")
	for _, r := range []struct {
		name string
		h    *HTTPFront
		p    *authn.Principal
		sid  string
	}{
		{"another caller, on the copy", b, mallory, sid},
		{"another caller, on a third replica", c, mallory, sid},
		{"anonymous", c, nil, sid},
		{"altered", c, alice, sid[:len(sid)-3] + "AAA"},
		{"another key", sealedFront(t, "gw-d", "other-key"), alice, sid},
	} {
		if w := sealedDo(r.h, r.p, http.MethodPost, r.sid, list); w.Code != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404", r.name, w.Code, w.Body)
		}
	}
	rotated := sealedFront(t, "gw-e", "new-key,shared-key")
	if w := sealedDo(rotated, alice, http.MethodPost, sid, list); w.Code != http.StatusOK {
		t.Fatalf("a replica with the key rotated: %d %s", w.Code, w.Body)
	}
	if w := sealedDo(rotated, alice, http.MethodPost, "", initializeTS); w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get(sessionIDHeader), "gw-e.s1") || keyID(w.Header().Get(sessionIDHeader)) == keyID(sid) {
		t.Fatalf("a session of the rotated replica: %d %q", w.Code, w.Header().Get(sessionIDHeader))
	}

	// DELETE ends the copy and is remembered here; the issuer serves on
	// until the id expires (they share nothing but the key).
	if w := sealedDo(b, alice, http.MethodDelete, sid, ""); w.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", w.Code)
	}
	if w := sealedDo(b, alice, http.MethodPost, sid, list); w.Code != http.StatusNotFound {
		t.Fatalf("after DELETE, the same replica: %d, want 404", w.Code)
	}
	if w := sealedDo(c, alice, http.MethodDelete, sid, ""); w.Code != http.StatusNoContent || c.Sessions() != 0 {
		t.Fatalf("DELETE on a replica without a copy: %d, %d sessions", w.Code, c.Sessions())
	}
	if w := sealedDo(c, alice, http.MethodPost, sid, list); w.Code != http.StatusNotFound {
		t.Fatalf("after DELETE on a replica without a copy: %d, want 404", w.Code)
	}
	if w := sealedDo(a, alice, http.MethodPost, sid, list); w.Code != http.StatusOK {
		t.Fatalf("the issuer after another replica's DELETE: %d", w.Code)
	}

	// Expired: the session in memory ends too.
	a.mu.Lock()
	a.sessions[sid].expires = time.Now().Add(-time.Second)
	a.mu.Unlock()
	if w := sealedDo(a, alice, http.MethodPost, sid, list); w.Code != http.StatusNotFound || a.Sessions() != 0 {
		t.Fatalf("expired, on the issuer: %d, %d sessions", w.Code, a.Sessions())
	}

	// Without a key: random ids, this replica's only, no replica header.
	cfg := config.Defaults()
	cfg.Gateway.AnswerTools = false
	plain := New(Options{Config: cfg}).NewHTTPFront(HTTPOptions{})
	t.Cleanup(plain.Close)
	w := sealedDo(plain, alice, http.MethodPost, "", initializeTS)
	if id := w.Header().Get(sessionIDHeader); len(id) != 26 || strings.Contains(id, ".") || w.Header().Get(replicaHeader) != "" {
		t.Fatalf("without a key: id %q, replica %q", id, w.Header().Get(replicaHeader))
	}
}

// TestSealedSessionToldOfChanges: the client of a sealed session may list
// on any replica, so the issuer tells it of a change to a list on its GET
// stream although the client never listed there: here it lists and calls
// tb.change (which changes tb's tools) on another replica's front only.
func TestSealedSessionToldOfChanges(t *testing.T) {
	g, _ := newGateway(t, nil, testServer("tb"))
	g.opts.StateKey = []byte("shared-key")
	issuer, other := g.NewHTTPFront(HTTPOptions{Replica: "gw-a"}), g.NewHTTPFront(HTTPOptions{Replica: "gw-b"})
	t.Cleanup(issuer.Close)
	t.Cleanup(other.Close)
	init := sealedDo(issuer, nil, http.MethodPost, "", strings.Replace(initializeTS, `"claude-ai"`, `"sealed"`, 1))
	sid := init.Header().Get(sessionIDHeader)
	if init.Code != http.StatusOK || !strings.HasPrefix(sid, "gw-a.") {
		t.Fatalf("initialize: %d %q", init.Code, sid)
	}
	srv := httptest.NewServer(issuer)
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(sessionIDHeader, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET at the issuer: %v %v", err, resp)
	}
	defer resp.Body.Close()
	told := make(chan struct{})
	go func() {
		buf := make([]byte, 0, 4096)
		chunk := make([]byte, 1024)
		for {
			n, err := resp.Body.Read(chunk)
			buf = append(buf, chunk[:n]...)
			if strings.Contains(string(buf), "notifications/tools/list_changed") {
				close(told)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	if w := sealedDo(other, nil, http.MethodPost, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"tb.change"`) {
		t.Fatalf("tools/list at the other replica: %d %.300s", w.Code, w.Body)
	}
	if w := sealedDo(other, nil, http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tb.change","arguments":{}}}`); w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"error"`) {
		t.Fatalf("tb.change at the other replica: %d %.300s", w.Code, w.Body)
	}
	select {
	case <-told:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the issuer's stream told nothing of the change")
	}
}

// TestStateKeyRotation: the requestState of a backend, wrapped for its
// caller, and a task id, sealed with the key being rotated out, open on a
// gateway whose state_key_env holds the new key first and the old one
// after; what it seals then, only the new key opens.
func TestStateKeyRotation(t *testing.T) {
	old, rotated := newStateSealer([]byte("old-key")), newStateSealer([]byte("new-key, old-key"))
	state := old.sealBackend("alice@op", "tools/call", "tb.x", json.RawMessage(`"s"`))
	if st, err := rotated.openState(state, "alice@op", time.Now()); err != nil || string(st.State) != `"s"` {
		t.Fatalf("an old key's requestState after rotation: %v %+v", err, st)
	}
	task := old.sealTask(taskRef{Server: "tb", Task: "t1"})
	if ref, ok := rotated.openTask(task); !ok || ref.Task != "t1" {
		t.Fatalf("an old key's task id after rotation: %v %+v", ok, ref)
	}
	fresh := rotated.sealBackend("alice@op", "tools/call", "tb.x", json.RawMessage(`"s"`))
	if _, err := old.openState(fresh, "alice@op", time.Now()); err == nil {
		t.Fatal("the old key opens what the new one sealed")
	}
	if _, err := newStateSealer([]byte("new-key")).openState(fresh, "alice@op", time.Now()); err != nil {
		t.Fatalf("the new key alone: %v", err)
	}
}
