package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
)

// haproxySealed is what docs/deploy.md has a balancer in front of
// replicas with sealed sessions add to round-robin: GETs (a session's
// standalone stream, a stream resumed) go to the replica that issued the
// session, learned from the Mcp-Gateway-Replica header of the answers and
// looked up by the Mcp-Session-Id's part before its first dot; everything
// else is balanced.
const haproxySealed = `  stick-table type string len 64 size 10k expire 1h
  stick store-response res.hdr(Mcp-Gateway-Replica)
  stick match req.hdr(Mcp-Session-Id),field(1,.) if METH_GET
`

// TestSealedSessionsBehindHAProxy: three replicas sharing a state key,
// behind HAProxy round-robin (no stickiness for POSTs; go-sdk's client
// with GETs routed to the issuer as docs/deploy.md has it, the TypeScript
// SDK's with no routing at all), serve one session of 2025-11-25 of each,
// with 1,000 mixed requests (lists, tools/call, prompts/get,
// resources/read, completion/complete) with no error, as OAuth callers.
// A replica other than the issuer restarted mid-run loses only what it
// had in flight: the later requests succeed on the others and on the
// restarted one, which serves the session from its id alone. Another
// caller's, or an altered, id gets 404. What needs the issuing replica is
// refused elsewhere with a reason naming it: a GET (405) and a request of
// the backend to the client during a call (a prompt that elicits).
func TestSealedSessionsBehindHAProxy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("HAProxy from the OS packages: Linux only")
	}
	if testing.Short() {
		t.Skip("skipped under -short: the replicas behind HAProxy run in the full suite (scripts/test)")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		haproxy = "/usr/sbin/haproxy"
		if _, err := os.Stat(haproxy); err != nil {
			t.Fatal("no haproxy: scripts/os-packages installs the Debian package (scripts/test runs it)")
		}
	}
	root := npmPeers(t)
	t.Parallel()
	op := startOP(t)
	lbAddr := freeAddr(t)
	resource := "http://" + lbAddr + "/mcp"
	env := append(baseEnv(t), "MCP_GATEWAY_STATE_KEY=sealed-sessions-key-"+strconv.Itoa(os.Getpid()))
	var (
		cfgs     []string
		replicas []*httpGW
		addrs    []string
	)
	for i := range 3 {
		cfg := httpConfig(t, map[string]any{"http": map[string]any{
			"auth": "oauth", "oauth": map[string]any{"resource": resource, "issuers": []map[string]any{{"issuer": op.Issuer}}},
			"state_key_env": "MCP_GATEWAY_STATE_KEY", "replica": "gw" + strconv.Itoa(i),
		}}, tb("tb", "-prompts", "-resources", "-say", "!", "-asks"))
		addr := freeAddr(t)
		cfgs, addrs = append(cfgs, cfg), append(addrs, addr)
		replicas = append(replicas, startHTTPAt(t, addr, cfg, env))
	}
	for i, g := range replicas {
		testutil.WaitFor(t, testutil.DefaultTimeout, "replica "+strconv.Itoa(i)+" to say it seals sessions", func() bool {
			return strings.Contains(g.stderr.String(), "sessions sealed with the state key") && strings.Contains(g.stderr.String(), "replica=gw"+strconv.Itoa(i))
		})
	}
	front := startHAProxyAt(t, haproxy, lbAddr, replicas, haproxySealed)
	token := func(u string) string {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
		defer cancel()
		users := map[string]string{"alice": alice.Password, "bob": bob.Password}
		tok, err := op.Token(ctx, testop.ClientID, u, users[u], resource, "openid")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	aliceTok, bobTok := token("alice"), token("bob")

	counter := &replicaCounter{next: bearer{aliceTok, http.DefaultTransport}, by: map[string]int{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "sealed", Version: "1"}, nil)
	cs, err := client.Connect(beCtx(t), &mcp.StreamableClientTransport{Endpoint: front + "/mcp", HTTPClient: &http.Client{Transport: counter}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect through HAProxy: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	sid := cs.ID()
	issuer, _, _ := strings.Cut(sid, ".")
	home := slices.Index([]string{"gw0", "gw1", "gw2"}, issuer)
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" || home < 0 {
		t.Fatalf("session %q at %s", sid, v)
	}
	t.Logf("go-sdk session id: %d bytes, issued by %s", len(sid), issuer)
	restarted := (home + 1) % 3
	name := "gw" + strconv.Itoa(restarted)

	do := func(i int64) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.DefaultTimeout)
		defer cancel()
		switch i % 7 {
		case 0:
			res, err := cs.ListTools(ctx, nil)
			if err == nil && !slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == "tb.echo" }) {
				err = fmt.Errorf("the list lacks tb.echo: %d tools", len(res.Tools))
			}
			return "tools/list", err
		case 1:
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tb.echo", Arguments: map[string]any{"n": i}})
			if err == nil && (res.IsError || fmt.Sprint(res.StructuredContent.(map[string]any)["n"]) != strconv.FormatInt(i, 10)) {
				err = fmt.Errorf("result %+v", res)
			}
			return "tools/call", err
		case 2:
			res, err := cs.ListPrompts(ctx, nil)
			if err == nil && len(res.Prompts) == 0 {
				err = fmt.Errorf("no prompts")
			}
			return "prompts/list", err
		case 3:
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tb.greet", Arguments: map[string]string{"who": "x"}})
			if err == nil && len(res.Messages) != 1 {
				err = fmt.Errorf("prompt %+v", res)
			}
			return "prompts/get", err
		case 4:
			res, err := cs.ListResources(ctx, nil)
			if err == nil && len(res.Resources) == 0 {
				err = fmt.Errorf("no resources")
			}
			return "resources/list", err
		case 5:
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r1"})
			if err == nil && (len(res.Contents) != 1 || res.Contents[0].Text != "r1 body!") {
				err = fmt.Errorf("contents %+v", res.Contents)
			}
			return "resources/read", err
		default:
			res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "tb.greet"},
				Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}})
			if err == nil && (len(res.Completion.Values) != 1 || res.Completion.Values[0] != "v!") {
				err = fmt.Errorf("completion %+v", res.Completion)
			}
			return "completion/complete", err
		}
	}
	type failure struct {
		op  string
		err error
		n   int64 // operations started before this one
	}
	const total, workers, killAt, phase = 1000, 8, 400, 700
	var (
		next     atomic.Int64
		mu       sync.Mutex
		failures []failure
		killed   atomic.Int64
	)
	run := func(to int64) {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= to {
						next.Add(-1)
						return
					}
					if i == killAt {
						killed.Store(i)
						_ = replicas[restarted].cmd.Process.Signal(syscall.SIGTERM)
					}
					if name, err := do(i); err != nil {
						mu.Lock()
						failures = append(failures, failure{name, err, i})
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
	}
	run(phase)
	if err := <-replicas[restarted].done; err != nil {
		t.Errorf("%s, stopped with SIGTERM, exited with %v\n%s", name, err, replicas[restarted].stderr)
	}
	replicas[restarted].done <- nil
	replicas[restarted] = startHTTPAt(t, addrs[restarted], cfgs[restarted], env)
	// The balancer takes it back once its health checks pass: then a
	// request of the session reaches it.
	testutil.WaitFor(t, testutil.DefaultTimeout, name+" back behind the balancer", func() bool {
		code, replica, _ := rawSealedPOST(t, front, aliceTok, sid, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if code != http.StatusOK {
			t.Fatalf("ping through the balancer: %d", code)
		}
		return replica == name
	})
	before := counter.snapshot()
	run(total)
	after := counter.snapshot()
	for _, f := range failures {
		// Only what the restarted replica had in flight may be lost.
		if f.n > killed.Load()+workers || f.n < killed.Load() {
			t.Errorf("operation %d (%s), not in flight at the SIGTERM (%d), failed: %v", f.n, f.op, killed.Load(), f.err)
		} else {
			t.Logf("operation %d (%s), in flight at the SIGTERM, failed: %v", f.n, f.op, f.err)
		}
	}
	for _, r := range []string{"gw0", "gw1", "gw2"} {
		if after[r]-before[r] == 0 {
			t.Errorf("after the restart, %s served none of the session's requests: %v", r, after)
		}
	}
	if bad := counter.refused(); len(bad) > 0 {
		t.Errorf("refused through the balancer: %v", bad)
	}
	t.Logf("go-sdk: %d operations on one session through 3 replicas (%s restarted after %d): %d failed; answers by replica %v",
		total, name, killed.Load(), len(failures), after)

	// Another caller's id, an altered one: 404, as an unknown session.
	if code, _, body := rawSealedPOST(t, front, bobTok, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Errorf("bob with alice's session id: %d %s", code, body)
	}
	altered := sid[:len(sid)-4] + map[bool]string{true: "AAAA", false: "BBBB"}[!strings.HasSuffix(sid, "AAAA")]
	if code, _, body := rawSealedPOST(t, front, aliceTok, altered, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Errorf("an altered id: %d %s", code, body)
	}

	// What needs the issuer, asked of another replica directly: refused,
	// naming it.
	other := replicas[(home+2)%3].base
	req, _ := http.NewRequest(http.MethodGet, other+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+aliceTok)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), `replica "`+issuer+`"`) {
		t.Errorf("GET at a replica that did not issue the session: %d %s", resp.StatusCode, body)
	}
	code, _, text := rawSealedPOST(t, other, aliceTok, sid, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"tb.ask"}}`)
	if code != http.StatusOK || !strings.Contains(text, `"error"`) || !strings.Contains(text, "cannot be asked for elicitation/create by this replica") || !strings.Contains(text, issuer) {
		t.Errorf("a prompt that elicits, at a replica that did not issue the session: %d %s", code, text)
	}

	// The TypeScript SDK's client: its own session, 1,000 requests,
	// through HAProxy round-robin with no routing at all: its GET is
	// refused (405) unless it reaches the issuer, and it goes on
	// without a standalone stream.
	plainLB := startHAProxyAt(t, haproxy, freeAddr(t), replicas, "")
	ctx, cancel := context.WithTimeout(context.Background(), 4*testutil.DefaultTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", testdataPath("sealed_client.mjs"), plainLB+"/mcp", aliceTok, strconv.Itoa(total))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, stderr.String())
	}
	var ts struct {
		SessionID string
		Errors    int
		Messages  []string
		Replicas  map[string]int
		Statuses  map[string]int
	}
	if err := json.Unmarshal(out, &ts); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if ts.Errors != 0 || !strings.Contains(ts.SessionID, ".") {
		t.Errorf("the TypeScript client: %d errors %v, session %q", ts.Errors, ts.Messages, ts.SessionID)
	}
	for k, n := range ts.Statuses {
		method, code, _ := strings.Cut(k, " ")
		if c, _ := strconv.Atoi(code); c >= 400 && (method != http.MethodGet || c != http.StatusMethodNotAllowed) {
			t.Errorf("the TypeScript client got %d answers %s", n, k)
		}
	}
	for _, r := range []string{"gw0", "gw1", "gw2"} {
		if ts.Replicas[r] == 0 {
			t.Errorf("the TypeScript client's session was not served by %s: %v", r, ts.Replicas)
		}
	}
	t.Logf("TypeScript SDK: %d requests on one session (id of %d bytes): answers by replica %v, statuses %v", total, len(ts.SessionID), ts.Replicas, ts.Statuses)
}

// replicaCounter counts the answers by the replica that gave them
// (Mcp-Gateway-Replica), and keeps those refused (4xx, 5xx).
type replicaCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	by   map[string]int
	bad  []string
}

func (c *replicaCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	c.mu.Lock()
	c.by[resp.Header.Get("Mcp-Gateway-Replica")]++
	if resp.StatusCode >= 400 {
		c.bad = append(c.bad, r.Method+" "+resp.Status)
	}
	c.mu.Unlock()
	return resp, nil
}

func (c *replicaCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.by)
}

func (c *replicaCounter) refused() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bad)
}

// rawSealedPOST POSTs body on session sid at base's /mcp as the bearer of
// tok, and returns the status, the replica that answered and the body.
func rawSealedPOST(t *testing.T, base, tok, sid, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Gateway-Replica"), string(data)
}
