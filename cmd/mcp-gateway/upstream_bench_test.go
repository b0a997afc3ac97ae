package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn/testop"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkUpstreamExchange measures what reaching a remote server with
// each caller's own credential costs once the caller's token was
// exchanged: one gateway (OAuth against a real OP), one go-sdk client
// session of alice's, one remote testbackend (-http, taking only tokens
// for urn:far), reached as two servers — "shared" with one static bearer
// token for everyone, "exchange" by RFC 8693 token exchange at the OP
// (alice's session, her kept token) — the calls of whoami alternating in
// one run. The target (issue 36): p50 exchange/shared ≤ 1.05.
func BenchmarkUpstreamExchange(b *testing.B) {
	op, err := testop.Start(alice)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(op.Close)
	url := benchTestbackendHTTP(b, "-http-audience", "urn:far") + "/mcp"
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"sub": "shared", "aud": "urn:far", "exp": time.Now().Add(24 * time.Hour).Unix()})
	shared := enc([]byte(`{"alg":"none"}`)) + "." + enc(claims) + ".x"
	addr := freeAddr(b)
	resource := "http://" + addr + "/mcp"
	cfg := httpConfig(b, map[string]any{
		"http": map[string]any{"auth": "oauth", "oauth": map[string]any{"resource": resource, "issuers": []map[string]any{{"issuer": op.Issuer}}, "scopes": []string{"mcp"}}},
	},
		beServer{Name: "shared", URL: url, Headers: map[string]string{"Authorization": "Bearer " + shared}},
		beServer{Name: "exchange", URL: url, Upstream: map[string]any{"mode": "token_exchange", "token_url": op.Issuer + "oauth/token",
			"audience": "urn:far", "client_id": testop.ExchangeClientID, "client_secret_env": "GW_EXCHANGE"}},
	)
	g := startHTTPAt(b, addr, cfg, baseEnv(b, "GW_EXCHANGE="+testop.ExchangeSecret))
	cs := sdkSession(b, g.base+"/mcp", benchToken(b, op, alice, resource))
	names := []string{"shared", "exchange"}
	want := []string{"shared", "u-alice"}
	ctx := context.Background()
	call := func(i int) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: names[i] + ".whoami", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", names[i], err, res)
		}
		if sc, _ := res.StructuredContent.(map[string]any); sc["subject"] != want[i] {
			b.Fatalf("%s reached the server as %v, want %s", names[i], sc["subject"], want[i])
		}
	}
	for i := range names {
		for range 300 { // warm up; the first exchange is in it
			call(i)
		}
	}
	exchanges := op.Exchanges()
	lat := benchAlternate(b, len(names), call)
	s50, x50 := benchPercentile(lat[0], 0.50), benchPercentile(lat[1], 0.50)
	b.ReportMetric(benchMicros(s50), "shared-p50-µs")
	b.ReportMetric(benchMicros(x50), "exchange-p50-µs")
	b.ReportMetric(float64(x50)/float64(s50), "p50-exchange/shared")
	if n := op.Exchanges() - exchanges; n != 0 {
		b.Errorf("%d exchanges during the run: the kept token was not used", n)
	}
}

// benchTestbackendHTTP runs testbackend -http on a free loopback port with
// args and returns its base URL once it listens.
func benchTestbackendHTTP(b *testing.B, args ...string) string {
	cmd := exec.Command(backendBin, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	stderr := new(testutil.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	b.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	listening := regexp.MustCompile(`listening on (\S+)`)
	var addr string
	testutil.WaitFor(b, testutil.DefaultTimeout, "testbackend -http to listen", func() bool {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return "http://" + addr
}
