package backends_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// seen is one HTTP request a remote server received.
type seen struct {
	method, rpc           string // HTTP method; JSON-RPC method (Mcp-Method is not sent by 2025-11-25 clients, so the body's)
	session, version, key string
}

// A Streamable HTTP session as go-sdk's (stateful) server expects it:
// server/discover first, answered without 2026-07-28; then the configured
// headers on every request, the session id and the negotiated version on
// every request after initialize, the standalone stream opened before
// initialized (so list_changed between calls arrives and refreshes the
// tools), and the session ended with DELETE at Close.
func TestRemoteStreamableSession(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	echo := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "one"}, echo)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var reqs []seen
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{method: r.Method, session: r.Header.Get("Mcp-Session-Id"), version: r.Header.Get("Mcp-Protocol-Version"), key: r.Header.Get("X-Api-Key")}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if _, m, ok := strings.Cut(string(body), `"method":"`); ok {
				s.rpc, _, _ = strings.Cut(m, `"`)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		mu.Lock()
		reqs = append(reqs, s)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // after the Manager's Close (cleanups run last first)

	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "on-failure", Headers: map[string]string{"X-Api-Key": "k1"}}}, nil)
	if st := e.status(t, "far"); st.State != backends.Ready {
		t.Fatalf("far: %+v", st)
	}
	if got := toolNames(e.Tools()); !slices.Equal(got, []string{"far/one"}) {
		t.Fatalf("tools %v", got)
	}
	// A tool added between calls: list_changed comes on the standalone stream.
	mcp.AddTool(srv, &mcp.Tool{Name: "two"}, echo)
	e.waitChange(t, "far")
	testutil.WaitFor(t, testutil.DefaultTimeout, "the added tool far/two", func() bool {
		return slices.Contains(toolNames(e.Tools()), "far/two")
	})
	if res := e.call(t, "far", "two", `{}`); !strings.Contains(string(res), `"hi"`) {
		t.Errorf("two: %s", res)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	sid := ""
	getAt, initializedAt, deleted := -1, -1, false
	for i, r := range reqs {
		if r.key != "k1" {
			t.Errorf("request %d (%s %s) without the configured header", i, r.method, r.rpc)
		}
		switch i {
		case 0:
			// Asked in 2026-07-28 first; this server serves that
			// revision only statelessly, so it is initialized.
			if r.rpc != "server/discover" || r.session != "" || r.version != wire.PerRequestVersion {
				t.Errorf("first request %+v, want server/discover", r)
			}
			continue
		case 1:
			if r.rpc != "initialize" || r.session != "" {
				t.Errorf("second request %+v, want initialize", r)
			}
			continue
		}
		if sid == "" {
			sid = r.session
		}
		if r.session == "" || r.session != sid || r.version != backends.ProtocolVersion {
			t.Errorf("request %d %+v: want session %q and version %s", i, r, sid, backends.ProtocolVersion)
		}
		switch {
		case r.method == http.MethodGet && getAt < 0:
			getAt = i
		case r.rpc == "notifications/initialized":
			initializedAt = i
		case r.method == http.MethodDelete:
			deleted = true
		}
	}
	if getAt < 0 || initializedAt < 0 || getAt > initializedAt {
		t.Errorf("standalone GET at %d, initialized at %d: want the stream first", getAt, initializedAt)
	}
	if !deleted {
		t.Error("no DELETE at Close")
	}
}

// A call that times out on a server that holds its POST open is abandoned:
// the gateway closes that request rather than keep a goroutine and a
// connection waiting for an answer nobody wants.
func TestRemoteAbandonsTimedOutCall(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hang"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil // never called: the POST is held below
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	closed := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"name":"hang"`)) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				<-r.Context().Done() // until the client goes
				close(closed)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "never", TimeoutMS: 200}}, nil)
	_, err := e.CallTool(context.Background(), "far", "hang", nil, backends.CallOptions{})
	var te *backends.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("hang: %v", err)
	}
	select {
	case <-closed:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the timed-out call's POST is still open")
	}
	if st := e.status(t, "far"); st.State != backends.Ready {
		t.Errorf("far after the timeout: %+v", st)
	}
}

// A legacy HTTP+SSE server whose endpoint event names another origin is
// refused: the gateway would send that origin the server's headers (and
// tokens) with every message.
func TestRemoteSSEEndpointOtherOrigin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var stolen []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(thief.Close)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: endpoint\ndata: "+thief.URL+"/messages\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(hs.Close)

	e := start(t, []config.Server{{Name: "far", URL: hs.URL + "/sse", Transport: "sse", Enabled: true, Restart: "never", Headers: map[string]string{"X-Api-Key": "k1"}}}, nil)
	st := e.waitState(t, "far", backends.Failed)
	if !strings.Contains(st.Error, "origin") {
		t.Errorf("far: %+v; want an error about the endpoint's origin", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stolen) > 0 {
		t.Errorf("the other origin got %d requests (X-Api-Key %q)", len(stolen), stolen)
	}
}

// A remote server that redirects to another origin is refused: Go's client
// would carry the configured headers (an X-Api-Key, unlike Authorization)
// to the other host. A redirect within the server's origin is followed.
func TestRemoteRedirectOtherOrigin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var stolen []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(thief.Close)
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "one"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, thief.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
		default:
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(hs.Close)

	headers := map[string]string{"X-Api-Key": "k1"}
	e := start(t, []config.Server{
		{Name: "away", URL: hs.URL + "/away", Enabled: true, Restart: "never", Headers: headers},
		{Name: "moved", URL: hs.URL + "/moved", Enabled: true, Restart: "never", Headers: headers},
	}, nil)
	if st := e.waitState(t, "away", backends.Failed); !strings.Contains(st.Error, "another origin") {
		t.Errorf("away: %+v; want an error about the other origin", st)
	}
	if st := e.waitState(t, "moved", backends.Ready); st.Error != "" {
		t.Errorf("moved: %+v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stolen) > 0 {
		t.Errorf("the other origin got %d requests (X-Api-Key %q)", len(stolen), stolen)
	}
}

// A request whose _meta carries a W3C trace context (the gateway's span of
// the call) goes to a remote server with it in its headers too.
func TestRemoteTraceHeaders(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "one"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var parent, state string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			mu.Lock()
			parent, state = r.Header.Get("traceparent"), r.Header.Get("tracestate")
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "on-failure"}}, nil)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if _, err := e.CallTool(context.Background(), "far", "one", json.RawMessage(`{}`),
		backends.CallOptions{Meta: map[string]any{"traceparent": tp, "tracestate": "v=1"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if parent != tp || state != "v=1" {
		t.Errorf("headers traceparent %q tracestate %q, want %s and v=1", parent, state, tp)
	}
}

// A remote server that serves 2026-07-28 (go-sdk's stateless Streamable
// HTTP) is spoken to in that revision: every request a POST of its own
// without a session, carrying the standard headers its body implies — the
// version, the method, the name and the Mcp-Param headers of the tool's
// x-mcp-header arguments, which the server checks (-32020) — no
// standalone GET, no DELETE; list changes arrive on a
// subscriptions/listen, and a cancelled call ends its HTTP request.
func TestRemoteStateless(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	deploy := &mcp.Tool{Name: "deploy", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"note":{"type":"string"}},"required":["region"]}`)}
	srv.AddTool(deploy, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Region string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed to " + args.Region}}}, nil
	})
	hanging, hung := make(chan struct{}), make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(hanging)
		<-ctx.Done() // until the gateway ends the request
		close(hung)
		return nil, ctx.Err()
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	var mu sync.Mutex
	var reqs []seen
	var params []string // the Mcp-Param-Region headers of tools/call
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{method: r.Method, session: r.Header.Get("Mcp-Session-Id"), version: r.Header.Get("Mcp-Protocol-Version"), rpc: r.Header.Get("Mcp-Method")}
		mu.Lock()
		reqs = append(reqs, s)
		if s.rpc == "tools/call" {
			params = append(params, r.Header.Get("Mcp-Name")+" "+r.Header.Get("Mcp-Param-Region"))
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)

	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "on-failure", Protocol: "auto"}}, nil)
	if st := e.status(t, "far"); st.State != backends.Ready {
		t.Fatalf("far: %+v", st)
	}
	if res := e.call(t, "far", "deploy", `{"region":"eu-west","note":"x"}`); !strings.Contains(string(res), "deployed to eu-west") {
		t.Errorf("deploy: %s", res)
	}
	if res := e.call(t, "far", "deploy", `{"region":"zürich"}`); !strings.Contains(string(res), "deployed to zürich") {
		t.Errorf("deploy (a value sent in Base64): %s", res)
	}

	// A tool added between calls: its list_changed comes on the listen.
	srv.AddTool(&mcp.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	})
	e.waitChange(t, "far")
	testutil.WaitFor(t, testutil.DefaultTimeout, "the added tool far/two", func() bool {
		return slices.Contains(toolNames(e.Tools()), "far/two")
	})

	// A listen cut (a proxy's idle timeout, a replica gone) is opened
	// again, and what changed in between is fetched.
	hs.CloseClientConnections()
	srv.AddTool(&mcp.Tool{Name: "three", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	testutil.WaitFor(t, testutil.DefaultTimeout, "the tool added while the listen was cut, far/three", func() bool {
		return slices.Contains(toolNames(e.Tools()), "far/three")
	})
	// The cut fails only the requests whose connection it broke
	// (TestRemoteCutRequestFailsAlone); a cut the transport cannot tell
	// from a server gone ends the session, and the supervisor connects
	// again. Either way far is ready.
	testutil.WaitFor(t, testutil.DefaultTimeout, "far ready after its connections were cut", func() bool {
		return e.status(t, "far").State == backends.Ready
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.CallTool(ctx, "far", "hang", json.RawMessage(`{}`), backends.CallOptions{})
		done <- err
	}()
	// Cancelled once the tool runs: a request ended before the server
	// dispatched it never reaches the tool at all.
	select {
	case <-hanging:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the hanging call did not reach the tool")
	}
	cancel()
	<-done
	select {
	case <-hung:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the server's handler was not cancelled when the call was")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	listened := false
	for i, r := range reqs {
		if r.method != http.MethodPost || r.session != "" || r.version != wire.PerRequestVersion || r.rpc == "" {
			t.Errorf("request %d %+v: want a POST of 2026-07-28 with its method and no session", i, r)
		}
		if r.rpc == "initialize" || r.rpc == "notifications/cancelled" {
			t.Errorf("request %d: %s in 2026-07-28", i, r.rpc)
		}
		listened = listened || r.rpc == "subscriptions/listen"
	}
	if !listened {
		t.Error("no subscriptions/listen")
	}
	if want := []string{"deploy eu-west", "deploy =?base64?esO8cmljaA==?=", "hang "}; !slices.Equal(params, want) {
		t.Errorf("Mcp-Name and Mcp-Param-Region of the calls: %q, want %q", params, want)
	}
}

// A server of 2026-07-28 that refuses the version of the first
// server/discover (-32022, HTTP 400) while naming 2026-07-28 among those
// it supports is asked again in that version, and spoken to in it — not
// initialized as one of the handshake era.
func TestRemoteStatelessVersionRefused(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var methods []string
	refused := false
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Header.Get("Mcp-Method")
		if method == "" && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if _, m, ok := strings.Cut(string(body), `"method":"`); ok {
				method, _, _ = strings.Cut(m, `"`)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		mu.Lock()
		methods = append(methods, method)
		first := !refused && method == "server/discover"
		refused = refused || first
		mu.Unlock()
		if first {
			var req struct{ ID json.RawMessage }
			body, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(body, &req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`, req.ID)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)

	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "never"}}, nil)
	st := e.status(t, "far")
	if st.State != backends.Ready || st.Protocol != wire.PerRequestVersion {
		t.Fatalf("far: %+v, want ready in %s", st, wire.PerRequestVersion)
	}
	if res := e.call(t, "far", "one", `{}`); !strings.Contains(string(res), `"hi"`) {
		t.Errorf("one: %s", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(methods) < 2 || methods[0] != "server/discover" || methods[1] != "server/discover" || slices.Contains(methods, "initialize") {
		t.Errorf("methods %q: want server/discover twice, then no initialize", methods)
	}
}

// A server of 2026-07-28 that refuses the gateway until it signs in (a
// 401 to the first server/discover) is still asked server/discover once
// the sign-in is stored — a refused sign-in is no sign that the server
// does not know the question — and spoken to in 2026-07-28.
func TestRemoteStatelessAfterLogin(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)

	dir := t.TempDir()
	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "on-failure"}}, func(o *backends.Options) { o.TokenDir = dir })
	e.waitState(t, "far", backends.NeedsLogin)
	tok, _ := json.Marshal(map[string]any{"url": hs.URL, "client_id": "c", "token_url": hs.URL + "/token",
		"token": map[string]any{"access_token": "good", "token_type": "Bearer", "expiry": time.Now().Add(time.Hour)}})
	if err := os.WriteFile(backends.TokenPath(dir, "far"), tok, 0o600); err != nil {
		t.Fatal(err)
	}
	st := e.waitState(t, "far", backends.Ready)
	if st.Protocol != wire.PerRequestVersion {
		t.Errorf("far after sign-in: protocol %q, want %s", st.Protocol, wire.PerRequestVersion)
	}
	if res := e.call(t, "far", "one", `{}`); !strings.Contains(string(res), `"hi"`) {
		t.Errorf("one: %s", res)
	}
}

// A request whose connection is cut mid-exchange (a proxy's reset, a
// server closing it) fails alone: the call gets an error, and the session
// goes on — no restart, the calls on other connections unharmed, the next
// call answered. Before, any such cut ended the session and failed every
// call in flight.
func TestRemoteCutRequestFailsAlone(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	})
	slowStarted := make(chan struct{})
	release := make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(slowStarted)
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var cut atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" && r.Header.Get("Mcp-Name") == "one" && !cut.Swap(true) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // no answer: the connection is cut
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	releaseSlow := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseSlow) // before hs.Close, which waits for the handler
	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "on-failure", Protocol: "auto"}}, nil)
	if st := e.status(t, "far"); st.State != backends.Ready {
		t.Fatalf("far: %+v", st)
	}
	slow := make(chan error, 1)
	go func() {
		res, err := e.CallTool(context.Background(), "far", "slow", json.RawMessage(`{}`), backends.CallOptions{})
		if err == nil && !strings.Contains(string(res), "slow done") {
			err = fmt.Errorf("slow: %s", res)
		}
		slow <- err
	}()
	<-slowStarted
	_, err := e.CallTool(context.Background(), "far", "one", json.RawMessage(`{}`), backends.CallOptions{})
	var re *backends.RPCError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "connection to the server broke") {
		t.Fatalf("the cut call: %v, want the transport's error", err)
	}
	releaseSlow()
	if err := <-slow; err != nil {
		t.Errorf("the call on another connection: %v", err)
	}
	if res := e.call(t, "far", "one", `{}`); !strings.Contains(string(res), `"hi"`) {
		t.Errorf("the next call: %s", res)
	}
	if st := e.status(t, "far"); st.State != backends.Ready || st.Restarts != 0 {
		t.Errorf("far after the cut: %+v, want ready without a restart", st)
	}
}

// A tool added after the lists were fetched and before the server has the
// gateway's subscriptions/listen in place sends its list_changed to nobody:
// once the listen is acknowledged the lists are fetched again, and the tool
// is there. Before, it was missing until the next change.
func TestRemoteChangeBeforeListen(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "far", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	listening, letListen := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" && !held.Swap(true) {
			close(listening)
			<-letListen // the server takes its time to set the listen up
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	let := sync.OnceFunc(func() { close(letListen) })
	t.Cleanup(let)
	e := start(t, []config.Server{{Name: "far", URL: hs.URL, Enabled: true, Restart: "on-failure", Protocol: "auto"}}, nil)
	<-listening
	srv.AddTool(&mcp.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	let()
	testutil.WaitFor(t, testutil.DefaultTimeout, "the tool added before the listen, far/two", func() bool {
		return slices.Contains(toolNames(e.Tools()), "far/two")
	})
}
