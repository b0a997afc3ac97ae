package main

import (
	"log/slog"
	"os"
	"os/signal"
	"runtime"
)

// startRuntimeStats logs the process's runtime figures — goroutines and
// heap — each time one of statsSignals arrives (SIGUSR1 on Unix), while the
// gateway serves. They are what the memory budget in docs/configuration.md
// is stated in, and what a soak run compares before and after its floods:
// the figures of a live gateway, without a debug endpoint on stdio. It
// returns a function that stops it.
func startRuntimeStats(log *slog.Logger) (stop func()) {
	if len(statsSignals) == 0 {
		return func() {}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, statsSignals...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				logRuntimeStats(log)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

func logRuntimeStats(log *slog.Logger) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	log.Info("runtime stats",
		"goroutines", runtime.NumGoroutine(),
		"heap_inuse", m.HeapInuse,
		"heap_objects", m.HeapObjects,
		"stack_inuse", m.StackInuse,
		"sys", m.Sys,
		"gc", m.NumGC)
}
