// Package atomicfile replaces a file's contents all at once: a reader sees
// the old file or the new one, never a part of either, and a crash midway
// leaves the old file in place. The gateway's state files (sign-ins,
// backend snapshots, client configurations it rewrites) are written
// through it.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

// WriteFile writes data to a temporary file in path's directory, with
// permissions perm, and renames it over path. The directory must exist.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a failure; gone by then after the rename
	if err := f.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	// On disk before the rename: else a power loss soon after may leave
	// path renamed but empty on some file systems (XFS), which for the
	// secret store's key would lose every secret.
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return renameRetrying(f.Name(), path, os.Rename)
}

// renameFor bounds how long renameRetrying tries again.
const renameFor = 2 * time.Second

// renameRetrying renames from to to, and tries again for up to renameFor
// while the rename fails for a reason that passes (inUse): on Windows a
// file another process has open cannot be replaced (Go opens files without
// FILE_SHARE_DELETE), so a gateway writing a backend's snapshot while
// another gateway reads it would fail, and the snapshot go unsaved.
func renameRetrying(from, to string, rename func(from, to string) error) error {
	deadline := time.Now().Add(renameFor)
	wait := time.Millisecond
	for {
		err := rename(from, to)
		if err == nil || !inUse(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// Replace replaces the file at path with data, keeping its permissions
// (0600 for a new file). A symbolic link is written through: its target
// is replaced and the link stays (dotfiles managers keep a configuration
// in a repository and link it into place). The directory must exist.
func Replace(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	return WriteFile(path, data, mode)
}
