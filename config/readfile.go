package config

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// MaxFileSize bounds the configuration file Load reads; a caller reading
// the file itself (the gateway's live reload) reads it with ReadFile and
// this bound.
const MaxFileSize = maxFileSize

// ReadFile reads a regular file of at most limit bytes; the error of a
// larger one says so. Anything but a regular file is refused before it is
// opened: opening a named pipe waits for a writer, for ever if none comes,
// and a device or a pipe can be read without end (what is read is bounded
// all the same, should the file be replaced in between). Errors do not
// repeat the path (the caller names it) but keep fs.ErrNotExist and the
// like reachable.
func ReadFile(path string, limit int64) ([]byte, error) {
	data, _, err := readFile(path, limit)
	return data, err
}

// FileState is what Load read of the configuration file: enough for the
// live reload to tell whether the file changed after Load read it, mostly
// without reading it again.
type FileState struct {
	// Info is the file's, taken just before it was read: a write after it
	// changes its size or modification time, a rename-on-save the file
	// (os.SameFile).
	Info fs.FileInfo
	// Read is when Info was taken. A file modified less than the
	// granularity of its modification time before then may have been
	// written again since without a change of Info: only its contents
	// tell (Digest).
	Read time.Time
	// Digest is the SHA-256 of the contents read.
	Digest [sha256.Size]byte
	// Blank says the contents were nothing but white space.
	Blank bool
}

// readFile is ReadFile, and the state of what it read.
func readFile(path string, limit int64) ([]byte, *FileState, error) {
	now := time.Now()
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, unwrapPathError(err)
	}
	if err := regular(st); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, unwrapPathError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, unwrapPathError(err)
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("file is larger than %d bytes", limit)
	}
	return data, &FileState{Info: st, Read: now, Digest: sha256.Sum256(data), Blank: len(bytes.TrimSpace(data)) == 0}, nil
}

// regular says why st is not a regular file, or nil if it is one.
func regular(st fs.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errors.New("is a directory, not a file")
	case m&fs.ModeNamedPipe != 0:
		return errors.New("is a named pipe (FIFO), not a regular file")
	case m&fs.ModeSocket != 0:
		return errors.New("is a socket, not a regular file")
	case m&fs.ModeDevice != 0:
		return errors.New("is a device, not a regular file")
	}
	return errors.New("is not a regular file")
}

// unwrapPathError drops the path from an *fs.PathError, since Error already
// names the file, but keeps fs.ErrNotExist and friends reachable.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pathErr{pe}
	}
	return err
}

type pathErr struct{ pe *fs.PathError }

func (e pathErr) Error() string { return e.pe.Err.Error() }
func (e pathErr) Unwrap() error { return e.pe.Err }
