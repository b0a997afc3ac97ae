package main

// Benchmarks of the real binary (docs/benchmarks.md): tools/call latency and
// throughput through the gateway against the same testbackend reached
// directly and through a byte-copying relay process (the floor of an extra
// hop), startup time with 1 vs 10 slow-starting backends, and the
// gateway's memory with 10 backends. Every figure is reported with
// b.ReportMetric next to its baseline from the same run. Run without -race
// (TestMain builds the binaries with -race when the tests run with it):
//
//	go test ./cmd/mcp-gateway/ -run '^$' -bench . -count 5

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// benchStartDelay is the slow start of every backend in BenchmarkStartup.
const benchStartDelay = 300 * time.Millisecond

// benchInFlight is the concurrency of the throughput benchmark.
const benchInFlight = 32

// benchBackendTools is how many tools a plain testbackend lists.
const benchBackendTools = 12

// benchEchoArgs are the arguments of every echo call: small, with a number
// that must arrive intact.
const benchEchoArgs = `{"text":"hello","n":12345678901234567890123}`

// benchClient drives the testbackend directly and the gateway with the
// same client (testutil.Client), so that the two paths differ only in what
// is behind the pipes.
type benchClient struct {
	*testutil.Client
	cmd    *exec.Cmd // nil for the in-process gateway
	stderr *testutil.Buffer
	stop   func() // closes stdin and waits for the server to end; idempotent
}

// benchStart runs bin with args and env. The process is stopped at the end
// of the benchmark if still running.
func benchStart(t testing.TB, env []string, bin string, args ...string) *benchClient {
	t.Helper()
	ch := testutil.StartChild(t, bin, args, env, testutil.ClientOptions{})
	return &benchClient{Client: ch.Client, cmd: ch.Cmd, stderr: ch.Stderr, stop: func() { ch.Stop(10 * time.Second) }}
}

// call sends one request and waits for its response; a JSON-RPC error is
// returned as an error.
func (c *benchClient) call(method, params string) ([]byte, error) {
	m, err := c.Do(method, params)
	if err != nil {
		return nil, fmt.Errorf("%w (stderr: %s)", err, c.stderr)
	}
	return m.Raw, nil
}

// handshake is initialize + notifications/initialized.
func (c *benchClient) handshake() error {
	if _, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		return err
	}
	c.Send(initializedMsg) // only ever from the benchmark's own goroutine
	return nil
}

// listTools returns the number of tools in one tools/list (following
// nextCursor).
func (c *benchClient) listTools() (int, error) {
	n, cursor := 0, ""
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + strconv.Quote(cursor) + `}`
		}
		line, err := c.call("tools/list", params)
		if err != nil {
			return 0, err
		}
		var r struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return 0, err
		}
		n += len(r.Result.Tools)
		if r.Result.NextCursor == "" {
			return n, nil
		}
		cursor = r.Result.NextCursor
	}
}

// benchConfig writes a gateway config with n testbackends named tb0..tbN-1,
// each started with args; answer tools are off so that only backends count.
func benchConfig(t testing.TB, n int, args ...string) string {
	t.Helper()
	return benchConfigWith(t, "", n, args...)
}

// benchConfigWith is benchConfig with more gateway settings (extra, as
// YAML flow mapping members: "trust: off").
func benchConfigWith(t testing.TB, extra string, n int, args ...string) string {
	t.Helper()
	var b strings.Builder
	if extra != "" {
		extra = ", " + extra
	}
	b.WriteString("gateway: { startup_timeout_ms: 20000, first_start_wait_ms: 20000, answer_tools: false" + extra + " }\n")
	if n == 0 {
		b.WriteString("servers: []\n")
	} else {
		b.WriteString("servers:\n")
	}
	quoted, _ := json.Marshal(args)
	for i := range n {
		fmt.Fprintf(&b, "  - { name: tb%d, command: %q, args: %s }\n", i, backendBin, quoted)
	}
	return testutil.TempFile(t, "config.yaml", b.String())
}

// startBenchGateway starts the gateway on cfg and completes the handshake.
func startBenchGateway(t testing.TB, cfg string) *benchClient {
	t.Helper()
	c := benchStart(t, baseEnv(t), gatewayBin, "--stdio", "--config", cfg)
	if err := c.handshake(); err != nil {
		t.Fatal(err)
	}
	return c
}

// startBenchBackend starts a testbackend directly and completes the
// handshake.
func startBenchBackend(t testing.TB, args ...string) *benchClient {
	t.Helper()
	c := benchStart(t, baseEnv(t), backendBin, args...)
	if err := c.handshake(); err != nil {
		t.Fatal(err)
	}
	return c
}

// percentile returns the q-quantile (0..1) of d, which it sorts.
func benchPercentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(q * float64(len(d)))
	if i >= len(d) {
		i = len(d) - 1
	}
	return d[i]
}

// benchAlternate times b.N calls on each of n paths, one call at a time:
// the paths alternate in batches of 50, and which goes first rotates, so
// machine noise lands on all alike. It returns each path's latencies; the
// timer runs only around the calls.
func benchAlternate(b *testing.B, n int, call func(path int)) [][]time.Duration {
	const batch = 50
	lat := make([][]time.Duration, n)
	b.ResetTimer()
	for done, round := 0, 0; done < b.N; round++ {
		k := min(batch, b.N-done)
		for i := range n {
			pi := (i + round) % n
			for range k {
				t0 := time.Now()
				call(pi)
				lat[pi] = append(lat[pi], time.Since(t0))
			}
		}
		done += k
	}
	b.StopTimer()
	return lat
}

func benchMicros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func benchMillis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkToolsCall measures a tools/call round trip of the echo tool
// through the gateway against the same call made directly to an identical
// testbackend, both driven by the same raw client over pipes, in the same
// run. A third path, relay, reaches a third testbackend through
// `testbackend -relay`, a process that only copies bytes: it is the cost of
// the extra process hop alone, the floor of any stdio proxy, so gateway
// minus relay is the gateway's own work. A fourth, read-relay
// (`testbackend -relay -read`), reads each message as a proxy must — decoded
// and checked once, sent on under its own id — and nothing else: the floor
// of any gateway that reads what it forwards, so gateway minus read-relay
// is what the gateway does beyond reading JSON. All processes stay up for
// the whole benchmark.
func BenchmarkToolsCall(b *testing.B) {
	direct := startBenchBackend(b)
	gw := startBenchGateway(b, benchConfig(b, 1))
	if n, err := gw.listTools(); err != nil || n != benchBackendTools {
		b.Fatalf("gateway tools/list: %d tools, %v", n, err)
	}
	relay := startBenchBackend(b, "-relay", "--", backendBin)
	// gw runs with the defaults, so with trust: pin (docs/trust.md);
	// nopin is the same gateway with the trust layer off.
	nopin := startBenchGateway(b, benchConfigWith(b, "trust: off", 1))
	if n, err := nopin.listTools(); err != nil || n != benchBackendTools {
		b.Fatalf("gateway (trust: off) tools/list: %d tools, %v", n, err)
	}
	readRelay := startBenchBackend(b, "-relay", "-read", "--", backendBin)
	const iDirect, iGW, iRelay, iNoPin, iReadRelay = 0, 1, 2, 3, 4
	paths := [5]struct {
		name   string
		c      *benchClient
		params string
	}{
		iDirect:    {"direct", direct, `{"name":"echo","arguments":` + benchEchoArgs + `}`},
		iGW:        {"gw", gw, `{"name":"tb0.echo","arguments":` + benchEchoArgs + `}`},
		iRelay:     {"relay", relay, `{"name":"echo","arguments":` + benchEchoArgs + `}`},
		iNoPin:     {"gw-nopin", nopin, `{"name":"tb0.echo","arguments":` + benchEchoArgs + `}`},
		iReadRelay: {"read-relay", readRelay, `{"name":"echo","arguments":` + benchEchoArgs + `}`},
	}
	for _, p := range paths {
		warmEcho(b, p.name, p.c, p.params)
	}

	// One op is one call on each path. The paths alternate in batches (and
	// rotate which goes first), so machine noise lands on all alike.
	b.Run("sequential", func(b *testing.B) {
		lat := benchAlternate(b, len(paths), func(pi int) {
			if _, err := paths[pi].c.call("tools/call", paths[pi].params); err != nil {
				b.Fatal(err)
			}
		})
		d50, d99 := benchPercentile(lat[iDirect], 0.50), benchPercentile(lat[iDirect], 0.99)
		g50, g99 := benchPercentile(lat[iGW], 0.50), benchPercentile(lat[iGW], 0.99)
		r50, r99 := benchPercentile(lat[iRelay], 0.50), benchPercentile(lat[iRelay], 0.99)
		b.ReportMetric(benchMicros(d50), "direct-p50-µs")
		b.ReportMetric(benchMicros(d99), "direct-p99-µs")
		b.ReportMetric(benchMicros(g50), "gw-p50-µs")
		b.ReportMetric(benchMicros(g99), "gw-p99-µs")
		b.ReportMetric(benchMicros(g50-d50), "added-p50-µs")
		b.ReportMetric(benchMicros(g99-d99), "added-p99-µs")
		b.ReportMetric(float64(g50)/float64(d50), "p50-gw/direct")
		b.ReportMetric(benchMicros(r50), "relay-p50-µs")
		b.ReportMetric(benchMicros(r99), "relay-p99-µs")
		b.ReportMetric(benchMicros(r50-d50), "relay-added-p50-µs")
		b.ReportMetric(benchMicros(g50-r50), "gw-over-relay-p50-µs")
		n50 := benchPercentile(lat[iNoPin], 0.50)
		b.ReportMetric(benchMicros(n50), "nopin-p50-µs")
		b.ReportMetric(float64(g50)/float64(r50), "p50-gw/relay")
		b.ReportMetric(float64(n50)/float64(r50), "p50-nopin/relay")
		rr50 := benchPercentile(lat[iReadRelay], 0.50)
		b.ReportMetric(benchMicros(rr50), "read-relay-p50-µs")
		b.ReportMetric(float64(g50)/float64(rr50), "p50-gw/read-relay")
	})

	// benchInFlight callers share one connection per path. One op is one
	// call on each path; the paths alternate in rounds.
	b.Run(fmt.Sprintf("inflight%d", benchInFlight), func(b *testing.B) {
		const round = 2000
		var took, cpu [len(paths)]time.Duration
		var calls [len(paths)]int
		cpuKnown := true
		b.ResetTimer()
		for done, r := 0, 0; done < b.N; r++ {
			n := min(round, b.N-done)
			for k := range len(paths) {
				pi := (k + r) % len(paths)
				cpu0, ok0 := benchProcCPU(paths[pi].c)
				d, err := concurrentCalls(paths[pi].c, paths[pi].params, n, benchInFlight)
				if err != nil {
					b.Fatal(err)
				}
				cpu1, ok1 := benchProcCPU(paths[pi].c)
				cpuKnown = cpuKnown && ok0 && ok1
				took[pi] += d
				cpu[pi] += cpu1 - cpu0
				calls[pi] += n
			}
			done += n
		}
		b.StopTimer()
		if cpuKnown {
			// CPU time the gateway and the relay process spent per call
			// (on Linux): unlike throughput, it does not move with the
			// machine's load.
			b.ReportMetric(benchMicros(cpu[iGW])/float64(calls[iGW]), "gw-cpu-µs/call")
			b.ReportMetric(benchMicros(cpu[iRelay])/float64(calls[iRelay]), "relay-cpu-µs/call")
			b.ReportMetric(benchMicros(cpu[iReadRelay])/float64(calls[iReadRelay]), "read-relay-cpu-µs/call")
			b.ReportMetric(float64(cpu[iGW])/float64(cpu[iRelay]), "cpu-gw/relay")
			b.ReportMetric(float64(cpu[iGW])/float64(cpu[iReadRelay]), "cpu-gw/read-relay")
		}
		var rate [len(paths)]float64
		for i := range rate {
			rate[i] = float64(calls[i]) / took[i].Seconds()
		}
		b.ReportMetric(rate[iDirect], "direct-calls/s")
		b.ReportMetric(rate[iGW], "gw-calls/s")
		b.ReportMetric(rate[iGW]/rate[iDirect], "tput-gw/direct")
		b.ReportMetric(rate[iRelay], "relay-calls/s")
		b.ReportMetric(rate[iRelay]/rate[iDirect], "tput-relay/direct")
		b.ReportMetric(rate[iGW]/rate[iRelay], "tput-gw/relay")
		b.ReportMetric(rate[iNoPin]/rate[iRelay], "tput-nopin/relay")
		b.ReportMetric(rate[iGW]/rate[iReadRelay], "tput-gw/read-relay")
	})
}

// concurrentCalls makes n calls on c from inflight goroutines and returns
// the wall time.
func concurrentCalls(c *benchClient, params string, n, inflight int) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	t0 := time.Now()
	for range min(inflight, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if _, err := c.call("tools/call", params); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(t0)
	if err, _ := firstErr.Load().(error); err != nil {
		return d, err
	}
	return d, nil
}

// BenchmarkStartup measures the time from starting a process until
// tools/list returns the complete list, every backend with the same slow
// start (benchStartDelay): the testbackend alone (direct, the floor), the
// gateway with 1 backend, and the gateway with 10. One op is one start of
// each, in rotating order; the metrics are medians over the ops (use
// -benchtime=Nx for N samples).
func BenchmarkStartup(b *testing.B) {
	delay := []string{"-start-delay", benchStartDelay.String()}
	cfg1 := benchConfig(b, 1, delay...)
	cfg10 := benchConfig(b, 10, delay...)
	env := baseEnv(b)
	type variant struct {
		name string
		run  func() (time.Duration, error)
	}
	gateway := func(cfg string, want int) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			t0 := time.Now()
			c := benchStart(b, env, gatewayBin, "--stdio", "--config", cfg)
			defer c.stop()
			if err := c.handshake(); err != nil {
				return 0, err
			}
			// tools/list waits for the backends (docs/design.md); if it ever
			// answered early, poll until the list is complete.
			var n int
			var err error
			testutil.Poll(20*time.Second, func() bool { n, err = c.listTools(); return err != nil || n >= want })
			if err != nil {
				return 0, err
			}
			if n != want {
				return 0, fmt.Errorf("tools/list: %d tools, want %d (stderr: %s)", n, want, c.stderr)
			}
			return time.Since(t0), nil
		}
	}
	variants := []variant{
		{"direct", func() (time.Duration, error) {
			t0 := time.Now()
			c := benchStart(b, env, backendBin, delay...)
			defer c.stop()
			if err := c.handshake(); err != nil {
				return 0, err
			}
			n, err := c.listTools()
			if err == nil && n != benchBackendTools {
				err = fmt.Errorf("direct tools/list: %d tools", n)
			}
			return time.Since(t0), err
		}},
		{"gw1", gateway(cfg1, benchBackendTools)},
		{"gw10", gateway(cfg10, 10*benchBackendTools)},
	}
	times := make([][]time.Duration, len(variants))
	b.ResetTimer()
	for i := range b.N {
		for k := range variants {
			vi := (k + i) % len(variants)
			d, err := variants[vi].run()
			if err != nil {
				b.Fatalf("%s: %v", variants[vi].name, err)
			}
			times[vi] = append(times[vi], d)
		}
	}
	b.StopTimer()
	med := make([]time.Duration, len(variants))
	for k, v := range variants {
		med[k] = benchPercentile(times[k], 0.5)
		b.ReportMetric(benchMillis(med[k]), v.name+"-ms")
	}
	b.ReportMetric(float64(med[2])/float64(med[1]), "gw10/gw1")
	b.ReportMetric(float64(med[1])/float64(med[0]), "gw1/direct")
	b.ReportMetric(benchMillis(med[1]-med[0]), "gw1-added-ms")
}

// BenchmarkRSS measures the gateway's memory with 10 backends running, after
// tools/list and a few calls to each, against a gateway with no backends
// (the baseline) in the same run. The testbackend's and the reaper helper's
// RSS are reported for context; they are separate processes. Metrics are
// medians over the ops.
func BenchmarkRSS(b *testing.B) {
	cfg0 := benchConfig(b, 0)
	cfg10 := benchConfig(b, 10)
	var gw0RSS, gw10RSS, gw10HWM, gw10Anon, backendRSS, reaperRSS, reaperAnon []float64
	b.ResetTimer()
	for range b.N {
		// Baseline: no backends.
		c0 := startBenchGateway(b, cfg0)
		if _, err := c0.listTools(); err != nil {
			b.Fatal(err)
		}
		st, err := benchProcStatus(c0.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		gw0RSS = append(gw0RSS, st.rss)
		c0.stop()

		c := startBenchGateway(b, cfg10)
		if n, err := c.listTools(); err != nil || n != 10*benchBackendTools {
			b.Fatalf("tools/list: %d tools, %v", n, err)
		}
		for i := range 10 {
			for range 10 {
				if _, err := c.call("tools/call", fmt.Sprintf(`{"name":"tb%d.echo","arguments":%s}`, i, benchEchoArgs)); err != nil {
					b.Fatal(err)
				}
			}
		}
		pid := c.cmd.Process.Pid
		st, err = benchProcStatus(pid)
		if err != nil {
			b.Fatal(err)
		}
		gw10RSS = append(gw10RSS, st.rss)
		gw10HWM = append(gw10HWM, st.hwm)
		gw10Anon = append(gw10Anon, st.anon)
		var sum float64
		var nb int
		for _, child := range benchChildren(pid) {
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", child))
			cst, err := benchProcStatus(child)
			if err != nil {
				continue
			}
			switch exe {
			case backendBin:
				sum += cst.rss
				nb++
			case gatewayBin:
				reaperRSS = append(reaperRSS, cst.rss)
				reaperAnon = append(reaperAnon, cst.anon)
			}
		}
		if nb != 10 {
			b.Fatalf("found %d testbackend children of the gateway, want 10", nb)
		}
		backendRSS = append(backendRSS, sum/float64(nb))
		c.stop()
	}
	b.StopTimer()
	med := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		s := slices.Clone(v)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.ReportMetric(med(gw10RSS), "gw10-RSS-MB")
	b.ReportMetric(med(gw10HWM), "gw10-HWM-MB")
	b.ReportMetric(med(gw10Anon), "gw10-anon-MB")
	b.ReportMetric(med(gw0RSS), "gw0-RSS-MB")
	b.ReportMetric(med(gw10RSS)/med(gw0RSS), "gw10/gw0")
	b.ReportMetric(med(backendRSS), "backend-RSS-MB")
	b.ReportMetric(med(reaperRSS), "reaper-RSS-MB")
	b.ReportMetric(med(reaperAnon), "reaper-anon-MB")
}

// benchMem is from /proc/PID/status, in MB (2^20 bytes): VmRSS, VmHWM
// (peak RSS) and RssAnon (the private part of VmRSS, without the mapped
// binary).
type benchMem struct{ rss, hwm, anon float64 }

// benchProcStatus reads VmRSS, VmHWM and RssAnon of pid.
func benchProcStatus(pid int) (benchMem, error) {
	st, err := testutil.StatusKB(pid, "VmRSS", "VmHWM", "RssAnon")
	if err != nil {
		return benchMem{}, err
	}
	return benchMem{rss: float64(st["VmRSS"]) / 1024, hwm: float64(st["VmHWM"]) / 1024, anon: float64(st["RssAnon"]) / 1024}, nil
}

// benchProcCPU returns the CPU time c's process has used so far, summed
// over its threads (testutil.CPUTime); false where there is no /proc.
func benchProcCPU(c *benchClient) (time.Duration, bool) {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0, false
	}
	return testutil.CPUTime(c.cmd.Process.Pid)
}

// benchChildren lists the processes whose parent is pid.
func benchChildren(pid int) []int {
	var kids []int
	for _, p := range testutil.Procs() {
		if p.PPID == pid {
			kids = append(kids, p.PID)
		}
	}
	return kids
}

// The in-process gateway of BenchmarkToolsCallInProcess starts its reaper
// helper as os.Executable() __reaper, which is this test binary: serve that
// here, before TestMain builds anything.
func init() {
	if len(os.Args) == 2 && os.Args[1] == reaperArg {
		if err := backends.RunReaper(os.Stdin); err != nil {
			os.Exit(exitFailure)
		}
		os.Exit(exitOK)
	}
}

// startInProcessGateway runs the command (run, as main does) in this
// process, serving stdio over OS pipes, so that the gateway's own work
// shows up in -cpuprofile/-memprofile and in allocs/op. Its backends are
// still real processes. The gateway finds its home (pins, snapshots) by
// os.UserHomeDir, so HOME is a temporary directory: a snapshot another run
// left in the user's cache, which no pin of this run's knows, is shown as
// nothing, and the first tools/list would not wait for the backend.
func startInProcessGateway(t testing.TB, cfg string, environ ...string) *benchClient {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testutil.Buffer{}
	lookup := func(k string) (string, bool) {
		if k == "NO_COLOR" {
			return "1", true
		}
		for _, kv := range environ {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v, true
			}
		}
		return "", false
	}
	exited := make(chan int, 1)
	go func() {
		exited <- run(context.Background(), []string{"--stdio", "--config", cfg},
			env{stdin: inR, stdout: outW, stderr: stderr, lookup: lookup})
		outW.Close()
	}()
	c := &benchClient{Client: testutil.NewClient(t, inW, outR, testutil.ClientOptions{}), stderr: stderr}
	c.stop = sync.OnceFunc(func() {
		inW.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("in-process gateway did not return within 10s of stdin closing")
		}
		inR.Close()
		<-c.EOF()
		outR.Close()
	})
	t.Cleanup(c.stop)
	if err := c.handshake(); err != nil {
		t.Fatal(err)
	}
	return c
}

// BenchmarkToolsCallInProcess is the sequential tools/call round trip with
// the gateway running inside the benchmark process (its backend is still a
// testbackend process), for profiling the gateway's own work per call:
//
//	go test ./cmd/mcp-gateway/ -run '^$' -bench InProcess -benchmem -cpuprofile cpu.out -memprofile mem.out
//
// The direct sub-benchmark is the same client against a testbackend
// directly: its B/op and allocs/op are the client's share, so gateway minus
// direct is what the gateway allocates per call. gateway-traced has
// OpenTelemetry tracing on, exporting to a receiver that discards.
func BenchmarkToolsCallInProcess(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	b.Cleanup(sink.Close)
	cases := []struct {
		name, params string
		start        func(testing.TB) *benchClient
	}{
		{"direct", `{"name":"echo","arguments":` + benchEchoArgs + `}`, func(t testing.TB) *benchClient { return startBenchBackend(t) }},
		{"gateway", `{"name":"tb0.echo","arguments":` + benchEchoArgs + `}`, func(t testing.TB) *benchClient {
			c := startInProcessGateway(t, benchConfig(t, 1))
			if n, err := c.listTools(); err != nil || n != benchBackendTools {
				t.Fatalf("tools/list: %d tools, %v; stderr:\n%s", n, err, c.stderr)
			}
			return c
		}},
		{"gateway-traced", `{"name":"tb0.echo","arguments":` + benchEchoArgs + `}`, func(t testing.TB) *benchClient {
			// The SDK's exporter reads its endpoint from the process's
			// environment.
			b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", sink.URL+"/v1/traces")
			return startInProcessGateway(t, benchConfig(t, 1), "OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none")
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.start(b)
			for range 100 {
				if _, err := c.call("tools/call", tc.params); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.call("tools/call", tc.params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The same gateway with benchInFlight calls in flight, as
	// BenchmarkToolsCall's inflight sub-benchmark drives it: its profile is
	// the one that burst costs (wake-ups, the batching of writes).
	b.Run(fmt.Sprintf("gateway-inflight%d", benchInFlight), func(b *testing.B) {
		c := cases[1].start(b)
		params := cases[1].params
		for range 100 {
			if _, err := c.call("tools/call", params); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		if _, err := concurrentCalls(c, params, b.N, benchInFlight); err != nil {
			b.Fatal(err)
		}
	})
}

// warmEcho checks that the echo of benchEchoArgs through c answers it,
// then warms the path up with 300 calls.
func warmEcho(b *testing.B, name string, c *benchClient, params string) {
	b.Helper()
	line, err := c.call("tools/call", params)
	if err != nil || !bytes.Contains(line, []byte(`12345678901234567890123`)) {
		b.Fatalf("%s echo: %v %s", name, err, line)
	}
	for range 300 {
		if _, err := c.call("tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
}
