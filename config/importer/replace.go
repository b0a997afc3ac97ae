package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-gateway/mcp-gateway/config/atomicfile"
	"github.com/pelletier/go-toml/v2"
)

// GatewayEntry is the one server a client keeps after ReplaceClient.
const GatewayEntry = "gateway"

// ReplaceClient rewrites the client's files so that the client runs only
// this gateway: the top-level server map of the first file read (the
// user-level one) becomes a single entry named "gateway" running
// exe --stdio --config configPath, and every other server map read is
// emptied. Each file is first copied to
// FILE.bak-<UTC time>; the rest of a file (other keys, their order) is kept,
// except that comments in a JSON file are dropped (the backup keeps them).
// It returns the backups made.
func ReplaceClient(r *Result, exe, configPath string, now time.Time) ([]string, error) {
	if len(r.Files) == 0 {
		return nil, errors.New("no client file was read")
	}
	// The gateway goes into the first (user-level) file, at its top-level
	// server map (or VS Code settings' mcp.servers, when that is where the
	// servers were), even when that map was empty or missing.
	primary := r.Files[0]
	put := []string{r.Client.ServersKey}
	for _, m := range r.Maps {
		if m.File == primary && m.Path[0] != "projects" {
			put = m.Path
			break
		}
	}
	type edit struct {
		paths [][]string // server maps to empty
		put   []string   // the map that gets the gateway entry, if in this file
	}
	edits := map[string]*edit{primary: {put: put}}
	order := []string{primary}
	for _, m := range r.Maps {
		ed := edits[m.File]
		if ed == nil {
			ed = &edit{}
			edits[m.File] = ed
			order = append(order, m.File)
		}
		if m.File != primary || dotted(m.Path) != dotted(put) {
			ed.paths = append(ed.paths, m.Path)
		}
	}
	// Compute every new file first: nothing is written if one fails.
	news := map[string][]byte{}
	for _, f := range order {
		old, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ed := edits[f]
		var out []byte
		if r.Client.TOML {
			out, err = replaceTOML(old, ed.put != nil, exe, configPath)
		} else {
			out, err = replaceJSON(old, ed.paths, ed.put, r.Client.Typed, exe, configPath)
		}
		if err != nil {
			return nil, &Error{File: f, Msg: "cannot rewrite: " + err.Error()}
		}
		news[f] = out
	}
	var backups []string
	for _, f := range order {
		b, err := backup(f, now)
		if err != nil {
			return backups, err
		}
		backups = append(backups, b)
		if err := writeAtomic(f, news[f]); err != nil {
			return backups, err
		}
	}
	return backups, nil
}

// gatewayArgs are the arguments of the client's new entry.
func gatewayArgs(configPath string) []string { return []string{"--stdio", "--config", configPath} }

// replaceJSON empties the server maps at paths and puts the gateway entry
// alone in the map at put (when not nil).
func replaceJSON(data []byte, paths [][]string, put []string, typed bool, exe, configPath string) ([]byte, error) {
	data = stripJSONC(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	var err error
	for _, p := range paths {
		if data, err = setPath(data, p, json.RawMessage(`{}`)); err != nil {
			return nil, err
		}
	}
	if put != nil {
		entry := map[string]any{"command": exe, "args": gatewayArgs(configPath)}
		if typed {
			entry["type"] = "stdio"
		}
		v, err := json.Marshal(map[string]any{GatewayEntry: entry})
		if err != nil {
			return nil, err
		}
		if data, err = setPath(data, put, v); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// setPath sets the member at path of the JSON object data to val, creating
// objects on the way, and keeps every other member in its place.
func setPath(data []byte, path []string, val json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	found := false
	n := 0
	member := func(k string, v []byte) {
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(v)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k == path[0] {
			found = true
			if len(path) > 1 {
				if v, err = setPath(v, path[1:], val); err != nil {
					return nil, fmt.Errorf("%s: %w", k, err)
				}
			} else {
				v = val
			}
		}
		member(k, v)
	}
	if !found {
		v := val
		for i := len(path) - 1; i > 0; i-- {
			kb, _ := json.Marshal(path[i])
			v = json.RawMessage("{" + string(kb) + ":" + string(v) + "}")
		}
		member(path[0], v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

var (
	tomlHeader   = regexp.MustCompile(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$`)
	tomlMCPTable = regexp.MustCompile(`^("mcp_servers"|'mcp_servers'|mcp_servers)\s*(\.|$)`)
	tomlMCPKey   = regexp.MustCompile(`^\s*("mcp_servers"|'mcp_servers'|mcp_servers)\s*[.=]`)
)

// replaceTOML drops every [mcp_servers...] table of a Codex config.toml
// and, when put, appends the gateway's table. The other tables and keys,
// and their comments, are kept; the result is checked by parsing both.
func replaceTOML(data []byte, put bool, exe, configPath string) ([]byte, error) {
	var out bytes.Buffer
	inMCP, sawHeader := false, false
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if m := tomlHeader.FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
			sawHeader = true
			inMCP = tomlMCPTable.MatchString(m[1])
		} else if !sawHeader && tomlMCPKey.MatchString(line) {
			return nil, errors.New("mcp_servers is written as keys, not as [mcp_servers.NAME] tables; edit it by hand")
		}
		if !inMCP {
			out.WriteString(line)
		}
	}
	if put {
		if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteByte('\n')
		}
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a JSON string is a TOML basic string
		var args []string
		for _, a := range gatewayArgs(configPath) {
			args = append(args, q(a))
		}
		fmt.Fprintf(&out, "\n[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n", GatewayEntry, q(exe), strings.Join(args, ", "))
	}
	// Check: the same document but for mcp_servers.
	var before, after map[string]any
	if err := toml.Unmarshal(data, &before); err != nil {
		return nil, err
	}
	if err := toml.Unmarshal(out.Bytes(), &after); err != nil {
		return nil, fmt.Errorf("the rewritten file would not parse (%v); edit it by hand", err)
	}
	servers, _ := after["mcp_servers"].(map[string]any)
	delete(before, "mcp_servers")
	delete(after, "mcp_servers")
	if !reflect.DeepEqual(before, after) || put != (len(servers) == 1 && servers[GatewayEntry] != nil) || !put && len(servers) > 0 {
		return nil, errors.New("the file's layout is too unusual to rewrite safely; edit it by hand")
	}
	return out.Bytes(), nil
}

// backup copies f to f.bak-<UTC time>, never over an existing file.
func backup(f string, now time.Time) (string, error) {
	b := f + ".bak-" + now.UTC().Format("20060102T150405Z")
	src, err := os.Open(f)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.OpenFile(b, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return "", fmt.Errorf("backup: %w", err)
	}
	if err := dst.Close(); err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	return b, nil
}

// writeAtomic replaces f with data (through a temporary file and a
// rename), keeping f's permissions. A symbolic link is written through:
// its target is replaced and the link stays (dotfiles managers keep a
// client's file in a repository and link it into place).
func writeAtomic(f string, data []byte) error { return atomicfile.Replace(f, data) }

// ErrExists is returned by WriteConfig for an existing file without force.
var ErrExists = errors.New("exists")

// WriteConfig writes the imported YAML to path (mode 0600: it may hold the
// client's secrets), creating its directory. An existing file is replaced
// only with force; otherwise the error wraps ErrExists.
func WriteConfig(path string, data []byte, force bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if force {
		return writeAtomic(path, data)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s %w; pass --force to overwrite it", path, ErrExists)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
