package importer

import (
	"cmp"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// confine gives a local server the sandbox import writes for it
// (docs/sandbox.md#servers-added-by-import): best_effort, with the
// absolute (or "~/") paths among its arguments and env values in both
// read and write, since import cannot tell which the server writes. A
// path import cannot grant (one that does not exist yet, so no Landlock
// rule can name it, or one the sandbox refuses) would leave the server
// unable to work under best_effort, so such a server gets mode off and a
// comment saying why. A remote server runs elsewhere and gets none.
func (e *Entry) confine(opts Options) {
	e.Notes = append(e.Notes, Confine(&e.Server, opts)...)
}

// Confine gives the local server s the sandbox import writes for it (see
// confine) and returns the notes that say why it is off, if it is. add
// confines the servers it writes the same way (docs/registry.md).
func Confine(s *config.Server, opts Options) (notes []string) {
	if s.Command == "" || s.URL != "" {
		return nil
	}
	type named struct{ what, path string }
	var found []named
	for _, a := range s.Args {
		if p := argPath(a, opts.Home); p != "" {
			found = append(found, named{"its argument " + p, p})
		}
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := s.Env[k]
		// A list (PATH-like) is read for its entries that exist: a
		// missing entry is one the server searches, not one it makes.
		list := filepath.SplitList(v)
		for _, piece := range list {
			p := argPath(piece, opts.Home)
			if p == "" {
				continue
			}
			if _, err := os.Stat(p); err != nil && len(list) > 1 {
				continue
			}
			found = append(found, named{k + " names " + p, p})
		}
	}
	var seen, paths, why []string
	for _, f := range found {
		if slices.Contains(seen, f.path) {
			continue
		}
		seen = append(seen, f.path)
		if _, err := os.Stat(f.path); err != nil {
			why = append(why, f.what+", which does not exist yet: create it, then set mode: best_effort with it in read and write")
			continue
		}
		if what := exposes(f.path, opts); what != "" {
			why = append(why, f.what+", which would expose "+what+": no sandbox grants it; give the server a narrower path and set mode: best_effort with that in read and write")
			continue
		}
		paths = append(paths, f.path)
	}
	if len(why) > 0 {
		for _, w := range why {
			notes = append(notes, "sandbox off: "+w+" (docs/sandbox.md#servers-added-by-import)")
		}
		s.Sandbox = config.Sandbox{Mode: config.SandboxOff}
		return notes
	}
	s.Sandbox = config.Sandbox{Mode: config.SandboxBestEffort, Read: paths, Write: slices.Clone(paths)}
	return nil
}

// argPath is the absolute path an argument names ("/p", "~/p", or
// "--flag=/p"), cleaned, or "". An argument with a variable ("${VAR}",
// or a literal "$$") is not read: import cannot know its value.
func argPath(a, home string) string {
	if strings.HasPrefix(a, "-") {
		_, v, ok := strings.Cut(a, "=")
		if !ok {
			return ""
		}
		a = v
	}
	if strings.Contains(a, "$") {
		return ""
	}
	if strings.HasPrefix(a, "~/") || strings.HasPrefix(a, `~\`) {
		if home == "" {
			return ""
		}
		a = config.ExpandHome(a, home)
	}
	if !filepath.IsAbs(a) {
		return ""
	}
	return filepath.Clean(a)
}

// exposes names what granting p would expose, or "": the sandbox refuses
// to start a server whose read or write is the filesystem's root, the
// home directory or one above it, or holds (or is inside) the gateway's
// own directories, so import leaves such a path out.
func exposes(p string, opts Options) string {
	sep := string(filepath.Separator)
	if filepath.Dir(p) == p {
		return "the whole filesystem"
	}
	if h := filepath.Clean(opts.Home); opts.Home != "" && (p == h || strings.HasPrefix(h, p+sep)) {
		return "the whole home directory"
	}
	goos := cmp.Or(opts.GOOS, runtime.GOOS)
	env := opts.Env
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	var own []string
	if opts.Home != "" {
		own = append(own, filepath.Dir(config.DefaultPath(opts.Home)), filepath.Dir(config.SandboxDir(opts.Home, goos, env)))
	}
	if opts.Self.Config != "" {
		own = append(own, opts.Self.Config)
	}
	for _, g := range own {
		if g = filepath.Clean(g); g == p || strings.HasPrefix(g, p+sep) || strings.HasPrefix(p, g+sep) {
			return "the gateway's " + g
		}
	}
	return ""
}
