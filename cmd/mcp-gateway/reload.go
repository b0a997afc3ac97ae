package main

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"sort"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// Live configuration (docs/configuration.md#live-reload): while serving,
// the gateway reloads its configuration when the file changes and on
// SIGHUP. This file reloads on SIGHUP; signals_unix.go keeps SIGHUP from
// killing the gateway at any other time (holdSIGHUP).

// reloadDebounce gathers the events of one save (editors write a temporary
// file and rename it over the original, or truncate and write in steps)
// into one reload.
const reloadDebounce = 200 * time.Millisecond

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
		}
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(time.Hour)
		t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				a.reload("SIGHUP")
			case ev, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				if filepath.Clean(ev.Name) == path && !ev.Has(fsnotify.Chmod) {
					t.Reset(reloadDebounce)
				}
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				a.log.Warn("watching the configuration file", "file", path, "err", err)
			case <-t.C:
				a.reload("file changed")
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

// reload loads the configuration again and applies its servers: added ones
// start, removed ones stop, changed ones restart, the others are not
// touched, and clients get list_changed. An invalid configuration is
// logged (file, line and key) and the running one stays. Other settings
// cannot change while the gateway runs: a change to one is logged.
func (a *app) reload(trigger string) {
	cfg, sources, err := config.Load(a.load)
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
			if prefix == "" && k == "servers" {
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
