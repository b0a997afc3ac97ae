package backends

import (
	"io"

	"github.com/mcp-gateway/mcp-gateway/backends/internal/proc"
)

// RunReaper is the whole job of the reaper helper process (Options.Reaper):
// it reads lines "add PGID" and "del PGID" from r, and when r ends (the
// gateway closed it, or died, even by SIGKILL) it SIGKILLs every process
// group still registered and returns. It covers the backends' own children
// (npx → node) everywhere and, on macOS, where there is no Pdeathsig, the
// backends themselves. On Windows it only reads r: Job Objects do its job.
//
// Malformed lines are ignored; PGIDs below 2 and the reaper's own group
// are never signalled. The error is r's read error, if any.
func RunReaper(r io.Reader) error { return proc.RunReaper(r) }
