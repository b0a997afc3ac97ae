package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/backends/testutil"
)

// TestFieldsBounded: a field of megabytes (a client's 3 MB tool name) is
// cut, with a marker, so that eight such calls do not rotate every earlier
// entry away (issue 32).
func TestFieldsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(Options{Path: path, MaxBytes: 1 << 20, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Tool: "first", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("é", 3<<20/2) // 3 MB, two bytes a character
	args, _ := json.Marshal(map[string]string{"text": huge})
	for range 8 {
		if err := l.Record(Entry{Tool: huge, Own: huge, Server: huge, Client: huge, Identity: huge, Via: huge,
			Reason: huge, Error: huge, ArgsDigest: "sha256:00", Args: args, Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	got := lines(t, path)
	if len(got) != 9 || got[0].Tool != "first" {
		t.Fatalf("%d entries in %s, the first %+.80v: earlier entries were rotated away", len(got), path, got[0])
	}
	st, _ := os.Stat(path)
	if st.Size() > 256<<10 {
		t.Errorf("%d bytes for 9 entries", st.Size())
	}
	e := got[1]
	for name, v := range map[string]string{"tool": e.Tool, "own": e.Own, "server": e.Server, "client": e.Client,
		"identity": e.Identity, "via": e.Via, "reason": e.Reason, "error": e.Error} {
		if len(v) > maxField+64 || !strings.HasSuffix(v, "…[truncated: 3145728 bytes in all]") || !utf8.ValidString(v) {
			t.Errorf("%s: %d bytes, ends %q", name, len(v), v[max(len(v)-60, 0):])
		}
	}
	var a string
	if err := json.Unmarshal(e.Args, &a); err != nil || len(a) > maxArgs+64 || !strings.HasPrefix(a, `{"text":"éé`) ||
		!strings.HasSuffix(a, "…[truncated: "+itoa(len(args))+" bytes in all]") {
		t.Errorf("arguments: %v, %d bytes, ends %q", err, len(a), a[max(len(a)-60, 0):])
	}
	if short := (Entry{Tool: "calc.add", Args: json.RawMessage(`{"a":1}`)}); true {
		bound(&short)
		if short.Tool != "calc.add" || string(short.Args) != `{"a":1}` {
			t.Errorf("a short entry changed: %+v", short)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestSymlinkRefused: an audit path that is a symbolic link is refused
// with an error that says so; the file it points to is not appended to
// (issue 32).
func TestSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.jsonl")
	testutil.Symlink(t, target, path)
	l, err := Open(Options{Path: path, MaxBytes: 1 << 20, Keep: 1})
	if err == nil {
		l.Record(Entry{Tool: "calc.add", Outcome: "ok"})
		l.Close()
		data, _ := os.ReadFile(target)
		t.Fatalf("a symlinked audit path was opened; its target now holds %q", data)
	}
	if !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), path) {
		t.Errorf("the error does not say why: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "precious\n" {
		t.Errorf("the target changed: %q", data)
	}
	// A link to a directory on the way is followed: only the file itself
	// matters.
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o700)
	if err := os.Symlink(real, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	l, err = Open(Options{Path: filepath.Join(dir, "linked", "audit.jsonl"), MaxBytes: 1 << 20, Keep: 1})
	if err != nil {
		t.Fatalf("a directory reached through a link: %v", err)
	}
	if err := l.Record(Entry{Tool: "calc.add"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if got := lines(t, filepath.Join(real, "audit.jsonl")); len(got) != 1 {
		t.Errorf("%d entries", len(got))
	}
}

// BenchmarkRecord is the cost a call pays for its entry: Record waits for
// the write of its line (with the lines of concurrent calls, one write).
func BenchmarkRecord(b *testing.B) {
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), "audit.jsonl"), MaxBytes: 1 << 30, Keep: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := Entry{Client: "claude-code", Server: "calc", Tool: "calc.add", Own: "add", Outcome: "ok",
		ArgsDigest: "sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862", DurationMS: 7.75}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Record(e); err != nil {
				b.Error(err)
			}
		}
	})
}

// TestRecordPathGone: a log whose path no longer leads to a file it can
// open fails its entries. They were written to the file it had open: a
// file unlinked with its directory, or one a symbolic link put in its
// place had replaced, which nobody reads, while every call was answered.
func TestRecordPathGone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows removes no directory of an open file, nor replaces an open file: the case is Unix's")
	}
	t.Run("directory removed", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		l, err := Open(Options{Path: filepath.Join(dir, "audit.jsonl"), MaxBytes: 1 << 20, Keep: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.Record(Entry{Tool: "calc.add", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := l.Record(Entry{Tool: "calc.lost", Outcome: "ok"}); err == nil {
			if got, err := os.ReadFile(filepath.Join(dir, "audit.jsonl")); !strings.Contains(string(got), "calc.lost") {
				t.Fatalf("an entry was reported written, but the path does not hold it (%v): it went to the file the directory took away", err)
			}
		}
		// Once the path can be opened again, entries are written there.
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := l.Record(Entry{Tool: "calc.sub", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		if got := lines(t, filepath.Join(dir, "audit.jsonl")); len(got) == 0 || got[len(got)-1].Tool != "calc.sub" {
			t.Errorf("entries after the directory came back: %+v", got)
		}
	})
	t.Run("replaced by a symbolic link", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "audit.jsonl")
		l, err := Open(Options{Path: path, MaxBytes: 1 << 20, Keep: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.Record(Entry{Tool: "calc.add", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "victim")
		if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
		if err := l.Record(Entry{Tool: "calc.add", Outcome: "ok"}); err == nil {
			t.Error("an entry was reported written although the path is now a symbolic link")
		}
		if data, _ := os.ReadFile(target); string(data) != "precious\n" {
			t.Errorf("the link's target changed: %q", data)
		}
	})
}
