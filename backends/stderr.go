package backends

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/mcp-gateway/mcp-gateway/backends/ratelimit"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// stderrTailLines is how many of a backend's last stderr lines are kept for
// error reports.
const stderrTailLines = 20

// maxStderrLine bounds one logged (and kept) stderr line; the rest of a
// longer line is read and dropped.
const maxStderrLine = 4096

// tail keeps the last lines a backend wrote to stderr, across restarts.
// A line is kept as read and made safe (maskLine) when it is first shown,
// once: a flood of lines, most of them dropped from the log, costs no
// masking for lines nobody sees.
type tail struct {
	mu    sync.Mutex
	lines []tailLine // ring of at most stderrTailLines
	next  int
	// mask makes a line safe: maskLine, or the current process's
	// (setMask); nil means maskLine.
	mask func(string) string
}

// setMask makes mask the masking of the lines to come (a new process's,
// whose secrets it also masks). The lines kept so far are made safe with
// the masking of the process that wrote them first.
func (t *tail) setMask(mask func(string) string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.lines {
		if l := &t.lines[i]; !l.safe {
			l.text, l.safe = t.maskLocked()(l.text), true
		}
	}
	t.mask = mask
}

// masking returns the masking of the lines to come.
func (t *tail) masking() func(string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maskLocked()
}

func (t *tail) maskLocked() func(string) string {
	if t.mask == nil {
		return maskLine
	}
	return t.mask
}

// tailLine is one kept line: text is safe to show once safe is set.
type tailLine struct {
	text string
	safe bool
}

func (t *tail) add(line string, safe bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) < stderrTailLines {
		t.lines = append(t.lines, tailLine{line, safe})
		return
	}
	t.lines[t.next] = tailLine{line, safe}
	t.next = (t.next + 1) % stderrTailLines
}

// snapshot returns the kept lines, made safe, oldest first, or nil.
func (t *tail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return nil
	}
	out := make([]string, 0, len(t.lines))
	for k := range len(t.lines) {
		l := &t.lines[(t.next+k)%len(t.lines)]
		if !l.safe {
			l.text, l.safe = t.maskLocked()(l.text), true
		}
		out = append(out, l.text)
	}
	return out
}

// maskLine makes one stderr line fit to show: escape sequences and
// control characters stripped (a line must not clear the terminal or
// forge a log record), secrets masked: those of a known shape first, as
// everywhere (ghp_…, keys, JWTs: [redacted:KIND]), then those a name or a
// URL shows (postgres://u:PASS@h, password=…): the line goes to
// the log, status and the client's errors.
func maskLine(line string) string {
	masked, _ := safetext.MaskShapesString(safetext.Strip(line, false)) // [redacted:KIND], as everywhere
	return safetext.Mask(masked, config.Masked)
}

// drainStderr reads r to EOF, logging each line at info through lim (log
// names the server) and keeping it in t. It never stops reading early, so
// a chatty child never blocks on a full pipe. The limiter decides first:
// only a line that is logged is masked now; a dropped one is masked only
// if the tail is shown while it holds it.
func drainStderr(r io.Reader, log *slog.Logger, t *tail, lim *ratelimit.Bucket) {
	drainStderrWith(r, log, t, lim, t.masking())
}

// drainStderrWith is drainStderr with its masking (a test counts it).
func drainStderrWith(r io.Reader, log *slog.Logger, t *tail, lim *ratelimit.Bucket, mask func(string) string) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 { // blank lines are skipped
			if allowLog(lim, log) {
				s := mask(string(line))
				log.Info(s, "stream", "stderr")
				t.add(s, true)
			} else {
				t.add(string(line), false)
			}
		}
		for isPrefix && err == nil { // drop the rest of an over-long line
			_, isPrefix, err = br.ReadLine()
		}
		if err != nil {
			if err != io.EOF && !errors.Is(err, os.ErrClosed) {
				log.Debug("backend stderr read error", "err", err)
			}
			return
		}
	}
}
