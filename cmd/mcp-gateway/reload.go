package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/secrets"
)

// Live configuration (docs/configuration.md#live-reload): while serving,
// the gateway reloads its configuration when the file changes and on
// SIGHUP. This file reloads on SIGHUP; signals_unix.go keeps SIGHUP from
// killing the gateway at any other time (holdSIGHUP).

// Reload timing. A reload acts only on a file that has settled: no event
// for reloadDebounce, then two reads settleGap apart that agree. Editors
// and cp truncate the file and then write it, in one step or several: a
// read in between sees an empty or a partial file, which must never be
// taken for the new configuration (an empty one has no servers: every
// backend would stop).
const (
	reloadDebounce = 200 * time.Millisecond
	settleGap      = 50 * time.Millisecond
	// A read that failed for lack of the gateway's own resources (file
	// descriptors) is tried again after shortageRetry, doubling up to
	// shortageRetryMax, until it succeeds.
	shortageRetry    = 500 * time.Millisecond
	shortageRetryMax = 30 * time.Second
)

// startReload watches the configuration file and SIGHUP until the returned
// stop is called; stop waits for a reload in progress to finish.
func (a *app) startReload(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)

	var events <-chan fsnotify.Event
	var errs <-chan error
	var w *fsnotify.Watcher
	path := ""
	// The secret store's files change with each `secret set` and `rm`: a
	// reload then restarts the servers whose secrets changed (Apply
	// compares the digests of their values, docs/secrets.md).
	secretFiles := secrets.Files(config.SecretsDir(a.load.Home))
	secretDir := filepath.Dir(secretFiles[0])
	if a.sources.YAML != nil {
		path, _ = filepath.Abs(*a.sources.YAML)
		var err error
		if w, err = fsnotify.NewWatcher(); err == nil {
			// The directory, not the file: a rename-on-save replaces the
			// file, and a watch on the file would follow the old one.
			err = w.Add(filepath.Dir(path))
		}
		if err != nil {
			a.log.Warn("not watching the configuration file; SIGHUP still reloads it", "file", path, "err", err)
		} else {
			events, errs = w.Events, w.Errors
			if secretDir != filepath.Dir(path) {
				if err := w.Add(secretDir); err != nil {
					// Made by the first `secret set`; until then a
					// server's secret is not set anyway.
					a.log.Debug("not watching the secret store; SIGHUP applies a changed secret", "dir", secretDir, "err", err)
				}
			}
		}
	}
	s := newSettler(path, a.sources.File)
	if events != nil && s.changedSinceLoad(a.log) {
		// Written after it was loaded and before the watch began: no event
		// will say so.
		s.want("file changed")
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(time.Hour)
		t.Stop()
		if s.trigger != "" {
			t.Reset(reloadDebounce)
		}
		for {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-hup:
				s.want("SIGHUP")
				t.Reset(0)
			case ev, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				switch name := filepath.Clean(ev.Name); {
				case ev.Has(fsnotify.Chmod):
				case name == path:
					s.want("file changed")
					t.Reset(reloadDebounce)
				case slices.Contains(secretFiles, name):
					s.want("secret changed")
					t.Reset(reloadDebounce)
				}
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				a.log.Warn("watching the configuration file", "file", path, "err", err)
			case <-t.C:
				if next := s.step(a.log, a.reload); next > 0 {
					t.Reset(next)
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
		if w != nil {
			w.Close()
		}
	}
}

// settler decides when the configuration file may be reloaded, and with
// which contents: only once it has settled (see reloadDebounce). Its
// methods run on the reload goroutine only.
type settler struct {
	path   string
	read   func() ([]byte, error)
	loaded *config.FileState // what the configuration in force was loaded from; nil if none

	trigger string // why a reload is wanted; "" when none is
	first   []byte // the first of the two reads; nil before it
	firstOK bool   // first holds a read (which may be empty)
	blank   bool   // the configuration in force came from a blank file (or none)
	warned  bool   // the blank file was reported, for this trigger
	retry   time.Duration
}

// newSettler returns the settler of the configuration file at path ("":
// none), from which the configuration in force was loaded (loaded: what
// Load read of it; nil when it read nothing). The file is not read again:
// whether the configuration in force came from a blank file matters, and
// loaded says.
func newSettler(path string, loaded *config.FileState) *settler {
	return &settler{
		path:   path,
		read:   func() ([]byte, error) { return config.ReadFile(path, config.MaxFileSize) },
		loaded: loaded,
		blank:  loaded == nil || loaded.Blank,
	}
}

// racyWindow is the coarsest modification-time granularity the gateway
// allows for (FAT's two seconds): a file modified less than this before
// it was loaded may have been written again since without a new
// modification time.
const racyWindow = 2 * time.Second

// changedSinceLoad reports whether the file may hold something other than
// what was loaded: it is another file now (a rename-on-save), or its size
// or modification time changed, or, when it was modified too shortly
// before it was loaded for its modification time to tell (racyWindow),
// its contents differ. Only in that last case is it read. (On Windows,
// os.SameFile compares by path when the file identity was not loaded: a
// replaced file shows in its size or time.) Called once the
// file is watched, it catches a write that landed between the load and
// the watch, which no event reports.
func (s *settler) changedSinceLoad(log *slog.Logger) bool {
	if s.path == "" || s.loaded == nil {
		return false
	}
	was := s.loaded.Info
	st, err := os.Stat(s.path)
	if err != nil {
		return true // gone or unreadable: a reload says why
	}
	if !os.SameFile(st, was) || st.Size() != was.Size() || !st.ModTime().Equal(was.ModTime()) {
		return true
	}
	if was.ModTime().Before(s.loaded.Read.Add(-racyWindow)) {
		return false
	}
	data, err := s.read()
	if err != nil {
		log.Debug("configuration file not read again to see whether it changed since it was loaded", "file", s.path, "err", err)
		return true
	}
	return sha256.Sum256(data) != s.loaded.Digest
}

// want asks for a reload: the settling starts again.
func (s *settler) want(trigger string) {
	s.trigger = trigger
	s.first, s.firstOK = nil, false
}

// step takes the next step of a wanted reload when its timer fires: the
// first read, or the second and then, if the file has settled, the reload
// (apply, with the file's contents; nil without a file). It returns when
// to take the next step; 0 when there is none (done, or waiting for the
// file to change again).
func (s *settler) step(log *slog.Logger, apply func(trigger string, data []byte)) time.Duration {
	if s.trigger == "" {
		return 0
	}
	if s.path == "" {
		apply(s.trigger, nil)
		s.trigger = ""
		return 0
	}
	data, err := s.read()
	if backends.ResourceShortage(err) {
		s.retry = min(max(2*s.retry, shortageRetry), shortageRetryMax)
		log.Warn("configuration not reloaded yet: the gateway is short of a system resource; trying again", "file", s.path, "err", err, "in", s.retry)
		s.first, s.firstOK = nil, false
		return s.retry
	}
	s.retry = 0
	if err != nil {
		// Missing, unreadable, too large: Load reads it again and says
		// so, with the file's name.
		apply(s.trigger, nil)
		s.trigger = ""
		return 0
	}
	if !s.firstOK {
		s.first, s.firstOK = data, true
		return settleGap
	}
	if !bytes.Equal(s.first, data) {
		// Still being written.
		s.first, s.firstOK = nil, false
		return reloadDebounce
	}
	if isBlank(data) && !s.blank {
		// Truncated and not written yet (or for long): never taken for
		// "no servers". The next change of the file reloads.
		if !s.warned {
			log.Warn("the configuration file is empty; the running configuration stays until it is written (to stop every server, write `servers: []`)", "file", s.path)
			s.warned = true
		}
		s.first, s.firstOK = nil, false
		return 0
	}
	apply(s.trigger, data)
	s.trigger, s.warned = "", false
	s.blank = isBlank(data)
	s.first, s.firstOK = nil, false
	return 0
}

// isBlank reports whether a configuration file holds nothing but white
// space: what a file being rewritten in place holds at first.
func isBlank(data []byte) bool { return len(bytes.TrimSpace(data)) == 0 }

// reload loads the configuration again (from data, the file's settled
// contents, when not nil) and applies its servers: added ones start,
// removed ones stop, changed ones restart, the others are not touched, and
// clients get list_changed. An invalid configuration is logged (file,
// line and key) and the running one stays. Other settings cannot change
// while the gateway runs: a change to one is logged.
func (a *app) reload(trigger string, data []byte) {
	load := a.load
	load.Data = data
	cfg, sources, err := config.Load(load)
	if err != nil {
		for _, e := range configErrors(err) {
			a.log.Error("configuration not reloaded; the running one stays", "trigger", trigger, "err", e)
		}
		return
	}
	for _, w := range sources.Warnings {
		a.log.Warn("config warning", "warning", w)
	}
	for _, key := range staticChanges(a.cfg, cfg) {
		a.log.Warn("setting cannot change while the gateway runs; restart it to apply", "key", key)
	}
	servers := a.servers(cfg)
	a.gw.SetServers(servers)
	ch := a.backends.Apply(servers)
	a.log.Info("configuration reloaded", "trigger", trigger, "added", ch.Added, "removed", ch.Removed, "restarted", ch.Restarted)
}

// configErrors splits Load's error into its parts, one log line each.
func configErrors(err error) []error {
	var out []error
	for _, e := range config.Errors(err) {
		out = append(out, e)
	}
	if len(out) == 0 {
		out = append(out, err)
	}
	return out
}

// staticChanges lists the keys (dotted, as in the file) outside `servers`
// whose value differs between the running configuration and a reloaded
// one.
func staticChanges(running, next *config.Config) []string {
	var keys []string
	var walk func(prefix string, a, b any)
	walk = func(prefix string, a, b any) {
		am, aok := a.(map[string]any)
		bm, bok := b.(map[string]any)
		if !aok || !bok {
			if !reflect.DeepEqual(a, b) {
				keys = append(keys, prefix)
			}
			return
		}
		seen := map[string]bool{}
		for k := range am {
			seen[k] = true
		}
		for k := range bm {
			seen[k] = true
		}
		for k := range seen {
			if prefix == "" && k == "servers" || prefix == "gateway" && k == "sandbox" {
				// gateway.sandbox is part of each server's effective
				// sandbox: a change restarts the servers it changes.
				continue
			}
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			walk(key, am[k], bm[k])
		}
	}
	walk("", asMap(running), asMap(next))
	sort.Strings(keys)
	return keys
}

func asMap(c *config.Config) any {
	b, _ := json.Marshal(c) // plain data: it cannot fail
	var m any
	_ = json.Unmarshal(b, &m)
	return m
}
