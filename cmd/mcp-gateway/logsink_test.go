package main

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateWriter blocks every Write until open is closed (a stderr nobody reads).
type gateWriter struct {
	open chan struct{}
	mu   sync.Mutex
	b    strings.Builder
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Write(p)
}

// Writes never block on a stuck stderr; beyond the bound they are dropped
// and the count is written once stderr moves again.
func TestLogSinkDropsWithCount(t *testing.T) {
	g := &gateWriter{open: make(chan struct{})}
	s := newLogSink(g, 100)
	line := strings.Repeat("x", 9) + "\n"
	done := make(chan struct{})
	go func() {
		for range 1000 {
			s.Write([]byte(line))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked on a stuck writer")
	}
	close(g.open)
	s.Write([]byte("last\n"))
	s.Close(5 * time.Second)
	g.mu.Lock()
	out := g.b.String()
	g.mu.Unlock()
	written := strings.Count(out, line) + strings.Count(out, "last\n")
	dropped := 0
	for _, m := range regexp.MustCompile(`(\d+) log records dropped`).FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[1])
		dropped += k
	}
	if written+dropped != 1001 || dropped == 0 || written > 30 {
		t.Errorf("%d written + %d counted as dropped, want 1001 with at most 30 written:\n%s", written, dropped, out)
	}
}

// The gateway's own records are never dropped in favour of a backend's
// forwarded output: when the bound is reached, queued backend lines make
// room for them, oldest first, and are counted as dropped.
func TestLogSinkKeepsGatewayRecords(t *testing.T) {
	g := &gateWriter{open: make(chan struct{})}
	ls, err := newLogger(g, func(string) (string, bool) { return "", false }, false, "")
	if err != nil {
		t.Fatal(err)
	}
	backend := ls.logger.With("component", "backends", "server", "flood")
	line := strings.Repeat("x", 100)
	n := 3 * logSinkMax / len(line) // three times what the sink holds
	for i := range n {
		backend.Info(line, "stream", "stderr")
		backend.Info(line, "source", "notifications/message")
		if i == n/2 {
			ls.logger.Warn("the gateway's own warning", "n", 1)
		}
	}
	ls.logger.Warn("the gateway's own warning", "n", 2)
	close(g.open)
	ls.close()
	g.mu.Lock()
	out := g.b.String()
	g.mu.Unlock()
	for _, want := range []string{"the gateway's own warning n=1", "the gateway's own warning n=2", "log records dropped"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from the %d bytes written", want, len(out))
		}
	}
}
