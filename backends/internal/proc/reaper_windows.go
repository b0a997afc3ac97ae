package proc

import (
	"io"
	"log/slog"
)

// RunReaper is not used on Windows, where each child's Job Object does its
// job; it reads r to the end and returns r's read error, if any.
func RunReaper(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}

// StartReaper returns nil, nil on Windows: Job Objects end the children
// when the gateway dies, with no helper process.
func StartReaper(argv []string, environ []string, log *slog.Logger) (*Reaper, error) {
	return nil, nil
}
