package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	_ "github.com/mcp-gateway/mcp-gateway/backends/testutil" // under Wine: t.TempDir cleans up (see its wine.go)
)

func lines(t *testing.T, path string) []Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: a line that is not an entry: %q", path, sc.Text())
		}
		out = append(out, e)
	}
	return out
}

// TestRecordAndTail: every entry is written, one JSON line each, in order
// per writer; Tail returns the last ones.
func TestRecordAndTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
	l, err := Open(Options{Path: path, MaxBytes: 1 << 30, Keep: 3})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 500 {
				l.Record(Entry{Time: time.Now(), Server: fmt.Sprintf("w%d", w), Tool: fmt.Sprintf("t%d", i), Outcome: "ok"})
			}
		})
	}
	wg.Wait()
	l.Close()
	l.Record(Entry{Tool: "after close"}) // ignored, never a panic
	got := lines(t, path)
	if len(got) != 4000 {
		t.Fatalf("%d entries, want 4000", len(got))
	}
	next := map[string]int{}
	for _, e := range got {
		if e.Tool != fmt.Sprintf("t%d", next[e.Server]) || e.Event != "call" {
			t.Fatalf("out of order or wrong: %+v", e)
		}
		next[e.Server]++
	}
	tail, err := Tail(path, 3)
	if err != nil || len(tail) != 3 || tail[2].Tool != got[3999].Tool || tail[2].Server != got[3999].Server {
		t.Fatalf("Tail: %v %+v", err, tail)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

// TestRotation: the file is rotated by size, Keep rotated files are kept,
// and nothing is lost but what is older than those; two logs on one file
// (two gateways) rotate it once between them.
func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := Open(Options{Path: path, MaxBytes: 64 << 10, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(Options{Path: path, MaxBytes: 64 << 10, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1500 {
		l := a
		if i%2 == 1 {
			l = b
		}
		l.Record(Entry{Tool: fmt.Sprintf("t%04d", i), Outcome: "ok", ArgsDigest: "sha256:0123456789abcdef0123456789abcdef"})
	}
	a.Close()
	b.Close()
	total := 0
	for _, p := range []string{path, path + ".1", path + ".2"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if st.Size() > 64<<10+16<<10 {
			t.Errorf("%s: %d bytes", p, st.Size())
		}
		total += len(lines(t, p))
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Error("more than keep rotated files")
	}
	if total < 600 {
		t.Errorf("only %d entries kept in 3 files of 64 KiB", total)
	}
	tail, err := Tail(path, 5)
	if err != nil || len(tail) != 5 {
		t.Fatalf("Tail: %v %v", err, tail)
	}
}
