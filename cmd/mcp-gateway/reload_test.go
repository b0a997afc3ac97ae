package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
	"github.com/mcp-gateway/mcp-gateway/config"
)

// settlerFixture is a settler over a real file holding text, and what it
// applies.
type settlerFixture struct {
	t       *testing.T
	path    string
	s       *settler
	logs    testutil.LogRecorder
	applied []string
	reads   int // of the file by the settler
}

// newSettlerFixture writes text, loads it as the gateway does at start-up
// (config.Load) and makes the settler of what was loaded.
func newSettlerFixture(t *testing.T, text string) *settlerFixture {
	f := &settlerFixture{t: t, path: filepath.Join(t.TempDir(), "config.yaml")}
	f.write(text)
	f.load()
	return f
}

func (f *settlerFixture) load() {
	f.t.Helper()
	_, src, err := config.Load(config.LoadOptions{Path: f.path})
	if err != nil || src.File == nil {
		f.t.Fatalf("load: %v, %+v", err, src)
	}
	f.s = newSettler(f.path, src.File)
	read := f.s.read
	f.s.read = func() ([]byte, error) { f.reads++; return read() }
}

// age sets the file's modification time to d ago.
func (f *settlerFixture) age(d time.Duration) {
	f.t.Helper()
	at := time.Now().Add(-d)
	if err := os.Chtimes(f.path, at, at); err != nil {
		f.t.Fatal(err)
	}
}

func (f *settlerFixture) write(text string) {
	f.t.Helper()
	if err := os.WriteFile(f.path, []byte(text), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *settlerFixture) step() time.Duration {
	return f.s.step(f.logs.Logger(), func(trigger string, data []byte) {
		f.applied = append(f.applied, string(data))
	})
}

// TestSettlerBlankFile: a file emptied in place after the gateway read
// servers from it is never applied, however long it stays empty (a
// warning says so, once); once it is written, it is.
func TestSettlerBlankFile(t *testing.T) {
	f := newSettlerFixture(t, "servers: [{name: a, command: x}]\n")
	f.write(" \n")
	for range 2 { // two changes of the file while it stays empty
		f.s.want("file changed")
		if next := f.step(); next != settleGap {
			t.Fatalf("first read: next step in %v", next)
		}
		if next := f.step(); next != 0 || len(f.applied) != 0 {
			t.Fatalf("an empty file: next step in %v, applied %q", next, f.applied)
		}
	}
	if n := len(f.logs.Find("the configuration file is empty")); n != 1 {
		t.Errorf("%d warnings about the empty file, want 1", n)
	}
	f.write("servers: []\n")
	f.s.want("file changed")
	f.step()
	f.step()
	if len(f.applied) != 1 || f.applied[0] != "servers: []\n" {
		t.Errorf("after the file was written: applied %q", f.applied)
	}
	// A gateway that started on an empty file applies an empty file (it
	// changes nothing).
	e := newSettlerFixture(t, "")
	e.s.want("SIGHUP")
	e.step()
	e.step()
	if len(e.applied) != 1 || e.applied[0] != "" {
		t.Errorf("an empty file after an empty configuration: applied %q", e.applied)
	}
}

// TestSettlerFileStillChanging: two reads that differ mean the file is
// still being written: nothing is applied, and the settling starts over
// after the debounce.
func TestSettlerFileStillChanging(t *testing.T) {
	f := newSettlerFixture(t, "servers: []\n")
	f.write(`{"servers": [`)
	f.s.want("file changed")
	f.step()
	f.write(`{"servers": []}`)
	if next := f.step(); next != reloadDebounce || len(f.applied) != 0 {
		t.Fatalf("a file that changed between the reads: next step in %v, applied %q", next, f.applied)
	}
	f.step()
	if next := f.step(); next != 0 || len(f.applied) != 1 || f.applied[0] != `{"servers": []}` {
		t.Errorf("once settled: next step in %v, applied %q", next, f.applied)
	}
}

// TestSettlerChangeBeforeWatch: a write that lands after the configuration
// was loaded and before the file is watched (no event reports it) is
// noticed, and its contents applied; an unchanged file is not reloaded.
// The file is read once at start-up (by Load) unless it was modified too
// shortly before it was loaded for its modification time to tell.
func TestSettlerChangeBeforeWatch(t *testing.T) {
	const loaded, edited = "servers: [{name: a, command: x}]\n", "servers: [{name: b, command: x}]\n" // the same size
	settled := func(f *settlerFixture) {
		t.Helper()
		f.s.want("file changed")
		f.step()
		if next := f.step(); next != 0 || len(f.applied) != 1 || f.applied[0] != edited {
			t.Errorf("next step in %v, applied %q", next, f.applied)
		}
	}

	// A file last written long before the load: its metadata tell.
	f := newSettlerFixture(t, loaded)
	f.age(time.Hour)
	f.load()
	if f.s.changedSinceLoad(f.logs.Logger()) || f.reads != 0 {
		t.Errorf("an unchanged file: changed, or read %d times", f.reads)
	}
	f.write(edited)
	f.age(time.Minute) // whatever time a write lands, it is not the loaded one
	if !f.s.changedSinceLoad(f.logs.Logger()) || f.reads != 0 {
		t.Errorf("a file written since: not changed, or read %d times", f.reads)
	}
	settled(f)

	// Replaced by a rename (an editor's save), same size, same time (not
	// on Windows, whose os.Stat leaves the identity to os.SameFile to
	// look up by path: there the time of the new file tells).
	r := newSettlerFixture(t, loaded)
	r.age(time.Hour)
	r.load()
	was := r.s.loaded.Info.ModTime()
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, was, was); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, r.path); err != nil {
		t.Fatal(err)
	}
	if !r.s.changedSinceLoad(r.logs.Logger()) && runtime.GOOS != "windows" {
		t.Error("a file replaced by a rename: not changed")
	}

	// Written just before the load, and again after it within the same
	// tick of the modification time: only the contents tell.
	q := newSettlerFixture(t, loaded)
	if q.s.changedSinceLoad(q.logs.Logger()) || q.reads != 1 {
		t.Errorf("an unchanged file just written: changed, or read %d times (want 1)", q.reads)
	}
	q.write(edited)
	was = q.s.loaded.Info.ModTime()
	if err := os.Chtimes(q.path, was, was); err != nil {
		t.Fatal(err)
	}
	if !q.s.changedSinceLoad(q.logs.Logger()) {
		t.Error("a file written again in the same tick: not changed")
	}
	settled(q)
}
