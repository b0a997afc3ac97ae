// Package audit writes the gateway's audit log (docs/trust.md, "The audit
// log"): one JSON line per tool call — and per approval of a withheld
// definition — appended to a file that is rotated by size. Entries are
// never dropped: a writer that cannot keep up makes callers wait. Several
// gateways may share one file: each line is one write to a file opened for
// appending, and rotation is done under a lock, after which every writer
// reopens the file.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config/filelock"
)

// Entry is one line of the audit log.
type Entry struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"` // "call", "approve" (a withheld definition accepted), or "deny" (a request the per-identity policy refused)
	// Client is the client's clientInfo.name ("REST", "mcp-gateway call",
	// "dashboard", ...); Identity whom the HTTP front authenticated.
	Client   string `json:"client,omitempty"`
	Identity string `json:"identity,omitempty"`
	Server   string `json:"server,omitempty"`
	Tool     string `json:"tool,omitempty"`     // the name called (a call), approved, or denied (its URI for a resource)
	Own      string `json:"own_name,omitempty"` // the backend's own name
	Via      string `json:"via,omitempty"`      // the meta tool a call came through
	Kind     string `json:"kind,omitempty"`     // an approval's or a denial's: tool, prompt (or resource)
	Digest   string `json:"digest,omitempty"`   // an approval's: the definition's digest
	Reason   string `json:"reason,omitempty"`   // an approval's: why it was withheld (changed, new); a denial's: the rule
	// ArgsDigest is the SHA-256 of a call's arguments; Args the arguments
	// themselves (secrets masked), only with gateway.audit.arguments.
	ArgsDigest  string          `json:"args_sha256,omitempty"`
	Args        json.RawMessage `json:"arguments,omitempty"`
	DurationMS  float64         `json:"duration_ms,omitempty"`
	Outcome     string          `json:"outcome,omitempty"` // ok, tool_error, or the error's REST code in lower case
	Error       string          `json:"error,omitempty"`
	ResultBytes int             `json:"result_bytes,omitempty"`
	Redactions  int             `json:"redactions,omitempty"` // secrets masked in the result
}

// Options configure a Log.
type Options struct {
	Path     string
	MaxBytes int64 // rotate when the file would grow past this
	Keep     int   // rotated files kept: PATH.1 (the newest) ... PATH.Keep
	Logger   *slog.Logger
}

// Log is an open audit log. Its methods are safe for concurrent use.
type Log struct {
	opts  Options
	log   *slog.Logger
	lines chan []byte
	done  chan struct{}

	closeOnce sync.Once
	mu        sync.Mutex // guards closed against Record after Close
	closed    bool

	f *os.File // the writer goroutine's
}

// queue is how many entries may wait for the writer before Record waits.
const queue = 4096

// Open opens (creating it and its directory if need be) the audit log at
// opts.Path and starts its writer.
func Open(opts Options) (*Log, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	f, err := openLog(opts.Path)
	if err != nil {
		return nil, err
	}
	l := &Log{opts: opts, log: opts.Logger, lines: make(chan []byte, queue), done: make(chan struct{}), f: f}
	go l.run()
	return l, nil
}

func openLog(path string) (*os.File, error) {
	f, err := openAppend(path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return f, nil
}

// Record appends e. It waits only when the writer is far behind.
func (l *Log) Record(e Entry) {
	if e.Event == "" {
		e.Event = "call"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		l.log.Warn("audit entry not written", "err", err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.lines <- b.Bytes()
}

// Close writes what is queued and closes the file.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		close(l.lines)
		l.mu.Unlock()
		<-l.done
	})
	return nil
}

// run writes the queued lines, each burst in one write.
func (l *Log) run() {
	defer close(l.done)
	defer func() { l.f.Close() }()
	// A burst is at most an eighth of a file, so that a file outgrows
	// MaxBytes by little even when two gateways write it.
	burst := 1 << 20
	if l.opts.MaxBytes > 0 {
		burst = int(min(int64(burst), max(l.opts.MaxBytes/8, 4096)))
	}
	var buf []byte
	for line := range l.lines {
		buf = append(buf[:0], line...)
	more:
		for len(buf) < burst {
			select {
			case next, ok := <-l.lines:
				if !ok {
					break more
				}
				buf = append(buf, next...)
			default:
				break more
			}
		}
		l.write(buf)
	}
}

// write appends buf (whole lines) to the log, rotating it first when it
// would grow past MaxBytes.
func (l *Log) write(buf []byte) {
	l.follow()
	if st, err := l.f.Stat(); err == nil && l.opts.MaxBytes > 0 && st.Size() > 0 && st.Size()+int64(len(buf)) > l.opts.MaxBytes {
		l.rotate()
	}
	if _, err := l.f.Write(buf); err != nil {
		l.log.Warn("audit log write failed", "file", l.opts.Path, "err", err)
	}
}

// follow reopens the log when another process rotated it.
func (l *Log) follow() {
	cur, err1 := l.f.Stat()
	now, err2 := os.Stat(l.opts.Path)
	if err1 == nil && err2 == nil && os.SameFile(cur, now) {
		return
	}
	if f, err := openLog(l.opts.Path); err == nil {
		l.f.Close()
		l.f = f
	}
}

// rotate moves PATH to PATH.1 (and each PATH.N to PATH.N+1, dropping the
// oldest) under the log's lock, unless another process just did, and
// reopens PATH.
func (l *Log) rotate() {
	unlock, err := filelock.Lock(l.opts.Path + ".lock")
	if err != nil {
		l.log.Warn("audit log not rotated", "file", l.opts.Path, "err", err)
		return
	}
	defer unlock()
	if st, err := os.Stat(l.opts.Path); err == nil && st.Size() < l.opts.MaxBytes/2 {
		l.follow() // rotated by another process meanwhile
		return
	}
	// Every writer opens the file so that it can be renamed while open
	// (on Windows too: openAppend shares it for deletion); the others
	// follow the rename at their next write. This writer's own handle is
	// closed first all the same.
	l.f.Close()
	keep := max(l.opts.Keep, 1)
	_ = os.Remove(fmt.Sprintf("%s.%d", l.opts.Path, keep))
	for n := keep - 1; n >= 1; n-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", l.opts.Path, n), fmt.Sprintf("%s.%d", l.opts.Path, n+1))
	}
	if err := os.Rename(l.opts.Path, l.opts.Path+".1"); err != nil {
		l.log.Warn("audit log not rotated", "file", l.opts.Path, "err", err)
	}
	f, err := openLog(l.opts.Path)
	if err != nil {
		l.log.Warn("audit log not reopened", "file", l.opts.Path, "err", err)
		f, _ = os.Open(os.DevNull) // writes fail, and are warned about, until the next rotation
	}
	l.f = f
}

// Tail returns the last n entries of the audit log at path (from its
// newest rotated file too when the current one holds fewer), oldest
// first. Lines that do not decode are skipped.
func Tail(path string, n int) ([]Entry, error) {
	var out []Entry
	for _, p := range []string{path, path + ".1"} {
		entries, err := tailFile(p, n-len(out))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(entries, out...)
		if len(out) >= n {
			break
		}
	}
	return out, nil
}

// tailFile reads the last n entries of one file, looking at its last
// 4 MiB at most.
func tailFile(path string, n int) ([]Entry, error) {
	if n <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const most = 4 << 20
	off := max(st.Size()-most, 0)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), most)
	var all []Entry
	first := off > 0
	for sc.Scan() {
		if first { // a partial line
			first = false
			continue
		}
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			all = append(all, e)
		}
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all, sc.Err()
}
