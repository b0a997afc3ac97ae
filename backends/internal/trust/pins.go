package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
	"github.com/mcp-gateway/mcp-gateway/config/filelock"
)

// The pin file (docs/trust.md, "The pin file"): for each server, each
// pinned tool and prompt's digest, its canonical definition (what a change
// is shown against) and when and how it was pinned. It is JSON, written
// whole through atomicfile, and every writer holds a lock on PATH.lock
// while it reads, changes and writes it, so that gateways and `approve`
// running at once add to it rather than overwrite each other.

// fileFormat is the pin file's format; a file of another is not read.
const fileFormat = 1

// maxFile bounds the pin file: far beyond thousands of definitions.
const maxFile = 64 << 20

// File is the pin file's contents.
type File struct {
	Format  int                `json:"format"`
	Servers map[string]*Server `json:"servers"`
}

// Server is one server's pins.
type Server struct {
	Tools   map[string]*Pin `json:"tools,omitempty"`
	Prompts map[string]*Pin `json:"prompts,omitempty"`
	// Instructions pins the server's instructions (kind Instructions, name
	// ""). A file with it is not read by gateways before it: they withhold
	// everything (fail closed).
	Instructions *Pin `json:"instructions,omitempty"`
}

// Pin is one pinned definition.
type Pin struct {
	Digest     string     `json:"digest"`
	Definition Definition `json:"definition"`
	Pinned     time.Time  `json:"pinned"`
	// How is "first sight" (recorded by trust: pin when the definition was
	// first listed) or "approved" (by mcp-gateway approve or the dashboard).
	How string `json:"how"`
}

// How a definition came to be pinned.
const (
	FirstSight = "first sight"
	Approved   = "approved"
)

// Pins returns the pins of kind of server, nil when none. A server's
// instructions are the one pin of kind Instructions, named "".
func (f *File) Pins(server string, kind Kind) map[string]*Pin {
	if f == nil || f.Servers[server] == nil {
		return nil
	}
	switch s := f.Servers[server]; kind {
	case Prompt:
		return s.Prompts
	case Instructions:
		if s.Instructions == nil {
			return nil
		}
		return map[string]*Pin{"": s.Instructions}
	}
	return f.Servers[server].Tools
}

// Set pins a definition of server, replacing any pin of the same name, and
// reports whether that changed the file.
func (f *File) Set(server string, kind Kind, name string, p *Pin) bool {
	if f.Servers == nil {
		f.Servers = make(map[string]*Server)
	}
	s := f.Servers[server]
	if s == nil {
		s = &Server{}
		f.Servers[server] = s
	}
	if kind == Instructions {
		if old := s.Instructions; old != nil && old.Digest == p.Digest && old.How == p.How {
			return false
		}
		s.Instructions = p
		return true
	}
	m := &s.Tools
	if kind == Prompt {
		m = &s.Prompts
	}
	if *m == nil {
		*m = make(map[string]*Pin)
	}
	if old := (*m)[name]; old != nil && old.Digest == p.Digest && old.How == p.How {
		return false
	}
	(*m)[name] = p
	return true
}

var digestForm = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Decode reads a pin file. Anything it cannot vouch for is an error: a
// format it does not know, a digest that is not one, or one that is not
// its definition's (a damaged or hand-edited file).
func Decode(data []byte) (*File, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var f File
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a pin file: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("not a pin file: data after the object")
	}
	if f.Format != fileFormat {
		return nil, fmt.Errorf("format %d, want %d", f.Format, fileFormat)
	}
	for _, server := range slices.Sorted(maps.Keys(f.Servers)) {
		s := f.Servers[server]
		if s == nil {
			return nil, fmt.Errorf("server %q: null", server)
		}
		for _, kind := range Kinds {
			pins := f.Pins(server, kind)
			for _, name := range slices.Sorted(maps.Keys(pins)) {
				p := pins[name]
				if err := p.check(kind); err != nil {
					return nil, fmt.Errorf("server %q, %s %q: %w", server, kind, name, err)
				}
			}
		}
	}
	return &f, nil
}

// check vouches for one pin.
func (p *Pin) check(kind Kind) error {
	switch {
	case p == nil:
		return errors.New("null")
	case !digestForm.MatchString(p.Digest):
		return fmt.Errorf("digest %q is not sha256:<64 hex digits>", wire.Truncate(p.Digest, 80, "..."))
	case p.How != FirstSight && p.How != Approved:
		return fmt.Errorf("how %q is not %q or %q", wire.Truncate(p.How, 40, "..."), FirstSight, Approved)
	}
	def, err := Canonical(kind, json.RawMessage(p.Definition))
	if err != nil {
		return err
	}
	if def.Digest() != p.Digest {
		return errors.New("the digest is not the definition's")
	}
	return nil
}

// Encode writes f as a pin file: indented, keys sorted.
func (f *File) Encode() ([]byte, error) {
	f.Format = fileFormat
	if f.Servers == nil {
		f.Servers = map[string]*Server{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Load reads the pin file at path: an empty File when there is none, an
// error when there is one that cannot be read or vouched for.
func Load(path string) (*File, error) {
	data, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Format: fileFormat}, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("pin file %s: %w", path, err)
	}
	return f, nil
}

func readFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("pin file %s: %w", path, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("pin file %s: larger than %d MiB", path, maxFile>>20)
	}
	return data, nil
}

// Update changes the pin file at path under its lock: it reads the file as
// it is now, lets change modify it, and writes it (atomically) when change
// reports that it did. A file that cannot be vouched for is never
// overwritten: its error is returned and nothing is written. Update
// returns the file as it is after the change.
func Update(path string, change func(*File) bool) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	unlock, err := filelock.Lock(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("lock pin file: %w", err)
	}
	defer unlock()
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	if !change(f) {
		return f, nil
	}
	data, err := f.Encode()
	if err != nil {
		return nil, err
	}
	// A pin file that is a symbolic link (a dotfiles repository's) is
	// written through: its target is replaced, the link stays.
	if err := atomicfile.WriteFile(Resolve(path), data, 0o600); err != nil {
		return nil, fmt.Errorf("write pin file: %w", err)
	}
	return f, nil
}

// Resolve follows path's symbolic links, also to a target that does not
// exist yet, and returns the file they end at (path when it is none).
func Resolve(path string) string {
	for range 40 { // as the kernel's limit
		dest, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return path
}
