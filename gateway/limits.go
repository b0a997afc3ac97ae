package gateway

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/gateway/authn"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Rate limits (gateway.rate_limits, docs/teams.md): token buckets per
// principal. The identity bucket counts every request of a caller — each
// JSON-RPC request POSTed to /mcp or /messages, each GET /sse (which opens
// a session), each REST request — and is taken before anything else reads
// it, so that a flood costs the gateway a refusal each; a tool's bucket
// counts a caller's calls of that tool, taken where the call is resolved
// (MCP, lazy call_tool, REST alike). A refusal is the JSON-RPC error
// codeRateLimited with retryAfter (seconds) in its data; over HTTP its
// status is 429 with Retry-After where the HTTP answer is the request's
// own (the identity limit, REST, the per-request era). Clients without a
// principal (stdio, the command line) are not limited.

// codeRateLimited is the JSON-RPC error of a request over a rate limit.
const codeRateLimited = -32029

// limiter is the gateway's rate limits.
type limiter struct {
	identity *ratelimit.Keyed // nil: no identity limit
	tools    []toolLimit
}

type toolLimit struct {
	match   []policy.Pattern
	buckets *ratelimit.Keyed
}

// newLimiter makes the limits of rl (checked by config.Load).
func newLimiter(rl config.RateLimits) *limiter {
	l := &limiter{}
	if rl.Identity.PerMinute > 0 {
		l.identity = ratelimit.NewKeyed(bucketOptions(rl.Identity))
	}
	for _, t := range rl.Tools {
		tl := toolLimit{buckets: ratelimit.NewKeyed(bucketOptions(t.Rate))}
		for _, s := range t.Tools {
			if p, err := policy.ParsePattern(s); err == nil {
				tl.match = append(tl.match, p)
			}
		}
		l.tools = append(l.tools, tl)
	}
	return l
}

func bucketOptions(r config.Rate) ratelimit.Options {
	burst := r.Burst
	if burst == 0 {
		burst = max(1, r.PerMinute/60)
	}
	return ratelimit.Options{Rate: float64(r.PerMinute) / 60, Burst: float64(burst)}
}

// limitedError is a request a rate limit refused.
type limitedError struct {
	limit      string // "identity" or "tool"
	server     string // the tool's backend (limit "tool")
	name       string // the tool as called (limit "tool")
	retryAfter time.Duration
}

func (e *limitedError) Error() string {
	if e.limit == "tool" {
		return fmt.Sprintf("Rate limit exceeded for tool %s: retry after %s", e.name, roundRetry(e.retryAfter))
	}
	return fmt.Sprintf("Rate limit exceeded: retry after %s", roundRetry(e.retryAfter))
}

// rpc is the error's JSON-RPC form: retryAfter in seconds (to the
// millisecond, at least one), limit and, for a tool's, the tool.
func (e *limitedError) rpc() *jsonrpc.Error {
	data := map[string]any{"retryAfter": retrySeconds(e.retryAfter), "limit": e.limit}
	if e.limit == "tool" {
		data["tool"] = e.name
	}
	return withData(codeRateLimited, e.Error(), data)
}

func retrySeconds(d time.Duration) float64 {
	return max(0.001, math.Ceil(d.Seconds()*1000)/1000)
}

func roundRetry(d time.Duration) time.Duration {
	return max(time.Millisecond, d.Round(time.Millisecond))
}

// admitRequests takes n requests from p's identity bucket, all or none; it
// returns the refusal, or nil.
func (g *Gateway) admitRequests(p *authn.Principal, n int) *limitedError {
	l := g.limits
	if l.identity == nil || p == nil || n == 0 {
		return nil
	}
	// All or none: a POST refused whole costs the caller nothing.
	if ok, wait := l.identity.TakeN(p.Key, time.Now(), n); !ok {
		g.limited("identity", "")
		return &limitedError{limit: "identity", retryAfter: wait}
	}
	return nil
}

// admitCall takes a call of a backend's tool (server, own) from p's bucket
// for that tool, if a limit names it; name is the tool as called.
func (g *Gateway) admitCall(p *authn.Principal, server, own, name string) *limitedError {
	if p == nil {
		return nil
	}
	for _, t := range g.limits.tools {
		for _, m := range t.match {
			if !m.Matches(policy.Tool, server, own) {
				continue
			}
			if ok, wait := t.buckets.Take(p.Key+"\x00"+server+"\x00"+own, time.Now()); !ok {
				g.limited("tool", server)
				return &limitedError{limit: "tool", server: server, name: name, retryAfter: wait}
			}
			return nil
		}
	}
	return nil
}

// limited reports a refusal to Options.OnLimited.
func (g *Gateway) limited(limit, server string) {
	if g.opts.OnLimited != nil {
		g.opts.OnLimited(limit, server)
	}
}

// admitPOST takes the requests of a POST (calls: their ids) from its
// principal's identity bucket; over the limit it answers 429 with
// Retry-After and the JSON-RPC error for each request, and reports false.
func (g *Gateway) admitPOST(w http.ResponseWriter, r *http.Request, calls []json.RawMessage) bool {
	if g.limits.identity == nil {
		return true
	}
	e := g.admitRequests(PrincipalOf(r.Context()), len(calls))
	if e == nil {
		return true
	}
	rpc := e.rpc()
	var body []byte
	if len(calls) > 1 {
		body = append(body, '[')
	}
	for i, id := range calls {
		if i > 0 {
			body = append(body, ',')
		}
		body = appendError(body, id, rpc)
	}
	if len(calls) > 1 {
		body = append(body, ']')
	}
	w.Header().Set("Retry-After", retryHeader(e.retryAfter))
	writeJSONError(w, http.StatusTooManyRequests, body)
	return false
}

// admitStream takes a GET /sse (which opens a session) from its
// principal's identity bucket, as a request; over the limit it answers 429
// with Retry-After and reports false.
func (g *Gateway) admitStream(w http.ResponseWriter, r *http.Request) bool {
	e := g.admitRequests(PrincipalOf(r.Context()), 1)
	if e == nil {
		return true
	}
	w.Header().Set("Retry-After", retryHeader(e.retryAfter))
	refuseHTTP(w, http.StatusTooManyRequests, "Too Many Requests: "+e.Error())
	return false
}

// retryHeader is Retry-After's value: whole seconds, rounded up.
func retryHeader(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}
