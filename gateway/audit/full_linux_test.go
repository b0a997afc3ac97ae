package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fullDisk returns a directory on a file system that is full: a tmpfs of
// 64 KiB filled to the last block (as root), and a function that frees it
// again; "" without root.
func fullDisk(t *testing.T) (dir string, free func()) {
	t.Helper()
	dir = t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		return "", nil
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 512)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for len(chunk) > 1 { // the last bytes of the last block
		chunk = chunk[:len(chunk)/2]
		f.Write(chunk)
	}
	f.Close()
	return dir, func() { os.Remove(filler) }
}

// TestRecordFullDisk: an entry that cannot be written (ENOSPC) is
// Record's error — the gateway fails its call — and none is lost silently;
// once there is room again entries are written, each a whole line (issue
// 32: on a full disk 6 of 22 entries were lost while calls were answered).
func TestRecordFullDisk(t *testing.T) {
	t.Run("dev-full", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		l, err := Open(Options{Path: "/dev/full", MaxBytes: 1 << 20, Keep: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.Record(Entry{Tool: "calc.add", Outcome: "ok"}); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Record on /dev/full: %v, want ENOSPC", err)
		}
	})
	t.Run("tmpfs", func(t *testing.T) {
		dir, free := fullDisk(t)
		if dir == "" {
			t.Skip("mounting a tmpfs needs root")
		}
		path := filepath.Join(dir, "audit.jsonl")
		l, err := Open(Options{Path: path, MaxBytes: 1 << 20, Keep: 1})
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for i := range 22 {
			if err := l.Record(Entry{Tool: fmt.Sprintf("t%02d", i), Outcome: "ok", ArgsDigest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				failed++
			}
		}
		if failed == 0 {
			t.Fatal("every entry written to a full disk")
		}
		free()
		if err := l.Record(Entry{Tool: "after", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
		l.Close()
		data, _ := os.ReadFile(path)
		var whole []Entry
		for line := range bytes.Lines(data) {
			var e Entry
			if json.Unmarshal(line, &e) == nil {
				whole = append(whole, e)
			}
		}
		if len(whole) != 22-failed+1 || whole[len(whole)-1].Tool != "after" {
			t.Errorf("%d entries failed, and the file holds %d whole ones (want %d, the last \"after\"):\n%s", failed, len(whole), 22-failed+1, data)
		}
	})
}
