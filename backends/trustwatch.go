package backends

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/trust"
)

// watchDebounce is how long the pin file's watcher waits after an event
// for more before it reports one: a write is a rename, sometimes with a
// chmod, and an editor's save is several events.
const watchDebounce = 50 * time.Millisecond

// watchFile reports changes of the file at path, debounced, until stop.
// Its directory is watched, not the file: the file is replaced by a
// rename at every write, which a watch on the file itself would not
// follow. A path that is a symbolic link is written through
// (trust.Update), so the directory of its target is watched too. Without
// a watcher (none available, no directory) it reports nothing.
func watchFile(path string, log *slog.Logger) (events <-chan struct{}, stop func()) {
	out := make(chan struct{}, 1)
	names := map[string]bool{filepath.Clean(path): true, filepath.Clean(trust.Resolve(path)): true}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		dirs := map[string]bool{}
		for name := range names {
			dirs[filepath.Dir(name)] = true
		}
		for dir := range dirs {
			if err = w.Add(dir); err != nil {
				w.Close()
				break
			}
		}
	}
	if err != nil {
		log.Warn("changes of the pin file by other processes apply at the next start", "file", path, "err", err)
		return out, func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		var t *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-done:
				if t != nil {
					t.Stop()
				}
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !names[filepath.Clean(ev.Name)] {
					continue
				}
				if t == nil {
					t = time.NewTimer(watchDebounce)
				} else {
					t.Reset(watchDebounce)
				}
				fire = t.C
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Debug("pin file watcher", "err", err)
			case <-fire:
				fire = nil
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out, func() {
		close(done)
		w.Close()
		<-exited
	}
}
