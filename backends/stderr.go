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
type tail struct {
	mu    sync.Mutex
	lines []string // ring of at most stderrTailLines
	next  int
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) < stderrTailLines {
		t.lines = append(t.lines, line)
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % stderrTailLines
}

// snapshot returns the kept lines, oldest first, or nil.
func (t *tail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return nil
	}
	out := make([]string, 0, len(t.lines))
	out = append(out, t.lines[t.next:]...)
	return append(out, t.lines[:t.next]...)
}

// drainStderr reads r to EOF, logging each line at info through lim (log
// names the server) and keeping it in t. It never stops reading early, so
// a chatty child never blocks on a full pipe.
func drainStderr(r io.Reader, log *slog.Logger, t *tail, lim *ratelimit.Bucket) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 { // blank lines are skipped
			// Escape sequences and control characters stripped: a line
			// must not clear the terminal or forge a log record. Secrets
			// masked: those of a known shape first, as everywhere
			// (ghp_…, keys, JWTs: [redacted:KIND]), then those a name or a
			// URL shows (postgres://u:PASS@h, password=…): the line goes
			// to the log, status and the client's errors.
			masked, _ := safetext.MaskShapesString(safetext.Strip(string(line), false))
			s := safetext.Mask(masked, config.Masked)
			logLimited(lim, log, slog.LevelInfo, s, "stream", "stderr")
			t.add(s)
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
