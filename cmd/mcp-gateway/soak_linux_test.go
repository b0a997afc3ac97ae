//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// soakEnv runs TestSoak: it takes minutes, so it is not part of the usual
// run. Run it without -race (the binaries would be built with the race
// detector too, which changes every memory figure):
//
//	MCP_GATEWAY_SOAK=1 go test -run TestSoak -v -timeout 30m ./cmd/mcp-gateway
const soakEnv = "MCP_GATEWAY_SOAK"

// TestSoak drives the real binary through every kind of flood, backend
// kills and restarts, a slow client and 100,000 calls, twice, and compares
// the gateway's goroutines, heap and RSS after a warm-up, after the first
// round and after the second: they must be flat (docs/configuration.md,
// "Limits"; the figures are in docs/benchmarks.md).
func TestSoak(t *testing.T) {
	if os.Getenv(soakEnv) == "" {
		t.Skip("set " + soakEnv + "=1 to run the soak (minutes)")
	}
	sampler := tb("sampler")
	sampler.TimeoutMS = 1000 // its requests to the client time out after 1 s
	c := startSoak(t, beConfig(t, tb("tb"), tb("victim"), sampler))

	for i := range 1000 {
		c.ok("tb.echo", fmt.Sprintf(`{"warm":%d}`, i))
	}
	samples := []soakSample{c.sample("warm")}
	const rounds = 2
	for round := 1; round <= rounds; round++ {
		c.round(round)
		samples = append(samples, c.sample(fmt.Sprintf("round %d", round)))
	}
	for _, s := range samples {
		t.Logf("%-8s goroutines %4d  heap in use %6.1f MB  RSS %6.1f MB  threads %3d  (peak RSS %.1f MB)",
			s.label, s.goroutines, mb(s.heapInuse), float64(s.rssKB)/1024, s.threads, float64(s.hwmKB)/1024)
	}
	t.Logf("the gateway sent besides responses: %s", c)
	warm, first, last := samples[0], samples[1], samples[len(samples)-1]
	if last.goroutines > first.goroutines+5 || last.goroutines > warm.goroutines+10 {
		t.Errorf("goroutines grew: %d warm, %d after round 1, %d after round %d", warm.goroutines, first.goroutines, last.goroutines, rounds)
	}
	if last.heapInuse > first.heapInuse+8<<20 {
		t.Errorf("heap in use grew by %.1f MB from round 1 to round %d", mb(last.heapInuse-first.heapInuse), rounds)
	}
	if last.rssKB > first.rssKB+16<<10 {
		t.Errorf("RSS grew by %.1f MB from round 1 to round %d", float64(last.rssKB-first.rssKB)/1024, rounds)
	}
	if last.hwmKB > 100<<10 {
		t.Errorf("peak RSS %.1f MB, over the 100 MB budget of a soak with 3 backends", float64(last.hwmKB)/1024)
	}
}

// round is one pass of every stress, in turn.
func (c *soakClient) round(round int) {
	t := c.t
	step := func(what string, f func()) {
		start := time.Now()
		f()
		t.Logf("round %d: %-38s %6.1fs", round, what, time.Since(start).Seconds())
	}
	step("ping flood (300,000, backend deaf 1 s)", func() {
		c.ok("tb.deaf", `{"ms":1000,"flood":300000}`)
		c.okWithin("tb.echo", `{"after":"ping flood"}`, 120*time.Second)
	})
	step("log flood (20,000 records)", func() {
		c.ok("tb.log", `{"count":20000,"data":"soak log line"}`)
	})
	step("progress flood (200,000) to a slow client", func() {
		c.p.Slow(true)
		r := c.await(c.request("tools/call", `{"name":"tb.progress","arguments":{"steps":200000,"ms":0},"_meta":{"progressToken":"soak"}}`), 300*time.Second)
		c.p.Slow(false)
		if !bytes.Contains(r, []byte(`"done"`)) {
			t.Fatalf("progress flood: %s", r)
		}
	})
	step("sampling flood (5,000, never answered)", func() {
		c.ok("sampler.deaf", `{"flood":5000,"method":"sampling/createMessage"}`)
		want := int64(5000 * round)
		testutil.WaitFor(t, 60*time.Second, "every sampling request answered", func() bool {
			var st struct {
				StructuredContent struct {
					FloodReplies map[string]int64 `json:"floodReplies"`
				} `json:"structuredContent"`
			}
			json.Unmarshal(c.resultOf(c.ok("sampler.stats", `{}`)), &st)
			var n int64
			for _, v := range st.StructuredContent.FloodReplies {
				n += v
			}
			return n >= want
		})
	})
	step("backend killed and restarted, twice", func() {
		for range 2 {
			c.call("tools/call", `{"name":"victim.crash","arguments":{}}`)
			testutil.WaitFor(t, 60*time.Second, "the victim restarted", func() bool {
				r := c.call("tools/call", `{"name":"victim.echo","arguments":{}}`)
				return bytes.Contains(r, []byte(`"result"`))
			})
		}
	})
	step("100,000 calls, 32 in flight", func() {
		var wg sync.WaitGroup
		var failed atomic.Int64
		for w := range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < 100000; i += 32 {
					if r := c.call("tools/call", fmt.Sprintf(`{"name":"tb.echo","arguments":{"i":%d}}`, i)); !bytes.Contains(r, []byte(`"result"`)) {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if n := failed.Load(); n > 0 {
			t.Errorf("%d of 100,000 calls failed", n)
		}
	})
	step("settle (timeouts and restarts run out)", func() { time.Sleep(3 * time.Second) })
}

// soakSample is the gateway's runtime figures at one point.
type soakSample struct {
	label                 string
	goroutines            int
	heapInuse             int64
	rssKB, hwmKB, threads int
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

var statsLine = regexp.MustCompile(`runtime stats goroutines=(\d+) heap_inuse=(\d+)`)

// sample asks the gateway for its runtime figures (SIGUSR1) and reads
// /proc for its memory and threads.
func (c *soakClient) sample(label string) soakSample {
	t := c.t
	pid := c.p.Cmd.Process.Pid
	n := len(statsLine.FindAllString(c.p.Stderr.String(), -1))
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var m []string
	testutil.WaitFor(t, 10*time.Second, "runtime stats on stderr", func() bool {
		all := statsLine.FindAllStringSubmatch(c.p.Stderr.String(), -1)
		if len(all) > n {
			m = all[len(all)-1]
			return true
		}
		return false
	})
	s := soakSample{label: label}
	s.goroutines, _ = strconv.Atoi(m[1])
	s.heapInuse, _ = strconv.ParseInt(m[2], 10, 64)
	s.rssKB = procStatusKB(t, pid, "VmRSS")
	s.hwmKB = procStatusKB(t, pid, "VmHWM")
	s.threads = procStatusKB(t, pid, "Threads")
	return s
}

// soakClient is a line-mode client for long runs: it keeps no message it
// has not awaited (only counts), and can read slowly.
type soakClient struct {
	t *testing.T
	p *testutil.Child
}

func startSoak(t *testing.T, cfg string) *soakClient {
	t.Helper()
	p := testutil.StartChild(t, gatewayBin, []string{"--stdio", "--config", cfg}, baseEnv(t), testutil.ClientOptions{Discard: true, Timeout: 60 * time.Second})
	c := &soakClient{t: t, p: p}
	r := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"soak","version":"1"}}`)
	if !bytes.Contains(r, []byte(`"result"`)) {
		t.Fatalf("initialize: %s", r)
	}
	p.Send(initializedMsg)
	return c
}

func (c *soakClient) request(method, params string) string { return c.p.Request(method, params) }

func (c *soakClient) await(id string, d time.Duration) []byte {
	c.t.Helper()
	return c.p.Await(id, d).Raw
}

func (c *soakClient) call(method, params string) []byte {
	c.t.Helper()
	return c.await(c.request(method, params), 60*time.Second)
}

// ok calls a tool and fails the test unless it returns a result.
func (c *soakClient) ok(name, args string) []byte {
	c.t.Helper()
	return c.okWithin(name, args, 60*time.Second)
}

func (c *soakClient) okWithin(name, args string, d time.Duration) []byte {
	c.t.Helper()
	r := c.await(c.request("tools/call", `{"name":`+strconv.Quote(name)+`,"arguments":`+args+`}`), d)
	if !bytes.Contains(r, []byte(`"result"`)) || bytes.Contains(r, []byte(`"isError":true`)) {
		c.t.Fatalf("%s: %s", name, r)
	}
	return r
}

// resultOf is the result member of a response line.
func (c *soakClient) resultOf(line []byte) json.RawMessage {
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	json.Unmarshal(line, &m)
	return m.Result
}

// String summarises what the gateway sent besides responses.
func (c *soakClient) String() string {
	var b strings.Builder
	for k, v := range c.p.Counts() {
		fmt.Fprintf(&b, "%s=%d ", k, v)
	}
	return b.String()
}
