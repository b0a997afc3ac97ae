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
