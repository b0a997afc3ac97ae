// Package audit writes the gateway's audit log (docs/trust.md, "The audit
// log"): one JSON line per tool call — and per approval of a withheld
// definition — appended to a file that is rotated by size. Record returns
// once its entry is written, or with the error that kept it from being
// written: the gateway fails a call whose entry it could not write, so no
// answered call goes unrecorded (fail closed). Several gateways may share
// one file: each line is one write to a file opened for appending, and
// rotation is done under a lock, after which every writer reopens the file.
// Every field is bounded (bound), so that no one entry can rotate the
// others away.
package audit

import (
	"bufio"
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
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
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
	RunID    string `json:"run_id,omitempty"`   // the run_script run a call is, or that made it
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
	lines chan pending
	done  chan struct{}

	closeOnce sync.Once
	mu        sync.Mutex // guards closed against Record after Close
	closed    bool

	f       *os.File // the writer goroutine's
	midLine bool     // the writer's: a failed write may have left f ending in part of a line
}

// pending is an encoded entry waiting for the writer, and where the
// writer says whether it was written.
type pending struct {
	line    []byte
	written chan error // capacity 1
}

// queue is how many entries may wait for the writer before Record waits
// to queue its own.
const queue = 4096

// ErrClosed is Record's error after Close.
var ErrClosed = errors.New("audit log closed")

// Open opens (creating it and its directory if need be) the audit log at
// opts.Path and starts its writer. A path that is a symbolic link is
// refused: an entry would be appended to whatever file it points to.
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
	l := &Log{opts: opts, log: opts.Logger, lines: make(chan pending, queue), done: make(chan struct{}), f: f}
	go l.run()
	return l, nil
}

// errSymlink is openAppend's error for a path that is a symbolic link
// where the system does not say so itself (Windows).
var errSymlink = errors.New("is a symbolic link")

func openLog(path string) (*os.File, error) {
	f, err := openAppend(path)
	if err != nil {
		// O_NOFOLLOW's error (ELOOP, EMLINK) does not say why.
		if fi, lerr := os.Lstat(path); errors.Is(err, errSymlink) || lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("audit log %s is a symbolic link, which is not followed (entries would be appended to whatever it points to): set gateway.audit.path to the file itself", path)
		}
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return f, nil
}

// The bounds of an entry's fields: far beyond any real name, identity or
// reason, and small enough that one entry cannot rotate the others away.
const (
	maxField = 1 << 10  // each string
	maxArgs  = 16 << 10 // the arguments
)

// bound cuts every field of e longer than its bound, ending it in a
// marker. Arguments cut are recorded as a JSON string of their beginning
// (args_sha256 is still the digest of all of them).
func bound(e *Entry) {
	for _, s := range []*string{&e.Event, &e.Client, &e.Identity, &e.Server, &e.Tool, &e.Own, &e.Via, &e.RunID,
		&e.Kind, &e.Digest, &e.Reason, &e.ArgsDigest, &e.Outcome, &e.Error} {
		*s = clip(*s, maxField)
	}
	if len(e.Args) > maxArgs {
		e.Args, _ = json.Marshal(clip(string(e.Args), maxArgs))
	}
}

// clip cuts s to at most n bytes (at a character's start) and marks it,
// when it is longer.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…[truncated: %d bytes in all]", s[:cut], len(s))
}

// Record appends e, each field bounded, and returns once it is written, or
// with why it could not be (a full disk, ErrClosed). It waits for the
// writer's next write, which takes every entry queued by then.
func (l *Log) Record(e Entry) error {
	if e.Event == "" {
		e.Event = "call"
	}
	bound(&e)
	line, err := wire.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit entry: %w", err)
	}
	p := pending{line: append(line, '\n'), written: make(chan error, 1)}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.lines <- p
	l.mu.Unlock()
	return <-p.written
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

// run writes the queued lines, each burst in one write, and tells each
// Record whether its line was written.
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
	var batch []pending
	for p := range l.lines {
		buf, batch = append(buf[:0], p.line...), append(batch[:0], p)
	more:
		for len(buf) < burst {
			select {
			case next, ok := <-l.lines:
				if !ok {
					break more
				}
				buf, batch = append(buf, next.line...), append(batch, next)
			default:
				break more
			}
		}
		n, err := l.write(buf)
		for _, p := range batch {
			// A line wholly written is recorded even when a later one of
			// the burst is not.
			if len(p.line) <= n {
				n -= len(p.line)
				p.written <- nil
			} else {
				n = 0
				p.written <- fmt.Errorf("audit entry not written to %s: %w", l.opts.Path, err)
			}
		}
		clear(batch)
	}
}

// write appends buf (whole lines) to the log, rotating it first when it
// would grow past MaxBytes, and returns how much of buf it wrote.
func (l *Log) write(buf []byte) (int, error) {
	if err := l.follow(); err != nil {
		l.log.Warn("audit log write failed", "file", l.opts.Path, "err", err)
		return 0, err
	}
	if st, err := l.f.Stat(); err == nil && l.opts.MaxBytes > 0 && st.Size() > 0 && st.Size()+int64(len(buf)) > l.opts.MaxBytes {
		l.rotate()
	}
	if l.midLine {
		// The part of a line a failed write left is ended, so that it
		// does not run into the next entry.
		if _, err := l.f.Write([]byte("\n")); err != nil {
			l.log.Warn("audit log write failed", "file", l.opts.Path, "err", err)
			return 0, err
		}
		l.midLine = false
	}
	n, err := l.f.Write(buf)
	if err != nil {
		l.midLine = n > 0
		l.log.Warn("audit log write failed", "file", l.opts.Path, "err", err)
	}
	return n, err
}

// follow reopens the log when its path no longer names the file open (it
// was rotated by another process, removed, or replaced). When the path
// cannot be opened (its directory is gone, a symbolic link took its
// place), it fails: writing on to the file open would report entries
// written to a file nobody reads.
func (l *Log) follow() error {
	cur, err1 := l.f.Stat()
	now, err2 := os.Stat(l.opts.Path)
	if err1 == nil && err2 == nil && os.SameFile(cur, now) {
		return nil
	}
	f, err := openLog(l.opts.Path)
	if err != nil {
		return err
	}
	l.f.Close()
	l.f, l.midLine = f, false
	return nil
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
		_ = l.follow() // rotated by another process meanwhile; write just followed the path, so an error here is the next write's
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
		f, _ = os.Open(os.DevNull) // writes fail, and so do their calls, until the next rotation
	}
	l.f, l.midLine = f, false
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
