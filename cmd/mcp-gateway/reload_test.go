package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// settlerFixture is a settler over a real file holding text, and what it
// applies.
type settlerFixture struct {
	t       *testing.T
	path    string
	s       *settler
	logs    testutil.LogRecorder
	applied []string
}

func newSettlerFixture(t *testing.T, text string) *settlerFixture {
	f := &settlerFixture{t: t, path: filepath.Join(t.TempDir(), "config.yaml")}
	f.write(text)
	f.s = newSettler(f.path)
	return f
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
