package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The file is decoded into the configuration's own types, directed by their
// struct tags: a struct is a mapping whose keys are its fields' json names
// (the names --show-config prints) and the other spellings in an `alias`
// tag; an embedded struct's keys are its container's. Why not yaml.v3's
// Decode is in docs/config-decoding.md.

// clientKeys are top-level keys of client configuration files (Claude
// Desktop, Cursor, VS Code, Claude Code) that the gateway does not use. They
// are skipped with a warning so that such a file can be passed as it is.
var clientKeys = map[string]string{
	"globalShortcut":             "a Claude Desktop setting",
	"preferences":                "a Claude Desktop setting",
	"isUsingBuiltInNodeForMcp":   "a Claude Desktop setting",
	"isDxtAutoUpdatesEnabled":    "a Claude Desktop setting",
	"inputs":                     "VS Code input prompts; ${input:...} is not supported",
	"enabledMcpjsonServers":      "a Claude Code setting",
	"disabledMcpjsonServers":     "a Claude Code setting",
	"enableAllProjectMcpServers": "a Claude Code setting",
}

var profileNames = []string{ProfileAnswer, ProfileAnswerDetailed, ProfileAnswerQuick}

// top applies the document's root mapping to l.cfg, then builds the servers.
func (l *loader) top(n *yaml.Node) {
	n = l.resolve(n)
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.errLine(n.Line, "", "the file must be a mapping of sections (openai, servers, mcpServers, ...), not %s", kindName(n))
		return
	}
	l.fields(n, "", reflect.ValueOf(l.cfg).Elem(), clientKeys)
	l.checkSandbox(&l.cfg.Gateway.Sandbox, "gateway.sandbox")
	l.servers()
}

// special decodes the keys that are not a plain field, found by their path;
// it reports whether key was one of them.
func (l *loader) special(e entry, key string) bool {
	switch {
	case key == "servers" || key == "mcpServers":
		l.serverSections = append(l.serverSections, e)
	case key == "model_profiles":
		l.profiles(e)
	case key == "$schema" || strings.HasPrefix(key, "x-"):
		// An editor's JSON schema; top-level "x-" keys, as in Compose files,
		// are a place for YAML anchors.
	case key == "openai.api_key" || key == "openai.apiKey":
		l.errLine(e.line, key, "the API key is read only from the environment variable that openai.api_key_env names (default OPENAI_API_KEY); remove it from the file")
	case key == "gateway.strict_names":
		l.autoBool(e, key, &l.cfg.Gateway.StrictNames)
	case key == "gateway.code_mode":
		l.autoBool(e, key, &l.cfg.Gateway.CodeMode)
	default:
		return false
	}
	return true
}

// autoBool decodes a key of auto, true or false: a YAML boolean is taken
// as written.
func (l *loader) autoBool(e entry, key string, dst *string) {
	n := l.resolve(e.val)
	var b bool
	switch {
	case n == nil || !l.scalar(n, key, "auto, true or false"):
	case n.ShortTag() == "!!bool" && n.Decode(&b) == nil:
		*dst = strconv.FormatBool(b)
		l.origin[key] = origin{line: e.line, key: key}
	default:
		l.decode(e, key, key, reflect.ValueOf(dst).Elem())
	}
}

// profiles merges model_profiles per profile and per field; a profile set to
// null is removed (it then inherits everything from answer).
func (l *loader) profiles(e entry) {
	es, _ := l.mapping(e.val, "model_profiles")
	for _, x := range es {
		path := join("model_profiles", x.key)
		if !slices.Contains(profileNames, x.key) {
			msg := "unknown profile (the profiles are answer, answer_detailed and answer_quick)"
			if s := Suggest(x.key, profileNames); s != "" {
				msg = "unknown profile (did you mean " + s + "?)"
			}
			l.errLine(x.line, path, "%s", msg)
			continue
		}
		if v := l.resolve(x.val); v != nil && isNull(v) {
			delete(l.cfg.ModelProfiles, x.key)
			l.origin[join(path, "model")] = origin{line: x.line, key: join(path, "model")}
			continue
		}
		p := l.cfg.ModelProfiles[x.key]
		l.decode(x, path, path, reflect.ValueOf(&p).Elem())
		l.cfg.ModelProfiles[x.key] = p
	}
}

// field is one key of a struct in the file.
type field struct {
	name  string // the json name, which messages and origin use
	index []int
}

// structKeys are the keys of a struct type: by every spelling, and every
// spelling in field order (the candidates for "did you mean").
type structKeys struct {
	byName map[string]field
	names  []string
}

// keysOf lists the keys of struct type t by every spelling, and every
// spelling in field order (the candidates for "did you mean"), once per
// type and Load.
func (l *loader) keysOf(t reflect.Type) structKeys {
	if k, ok := l.keys[t]; ok {
		return k
	}
	k := structKeys{byName: map[string]field{}}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			idx := append(slices.Clone(index), i)
			if f.Anonymous {
				walk(f.Type, idx)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			for _, n := range append([]string{name}, strings.Split(f.Tag.Get("alias"), ",")...) {
				if n != "" {
					k.byName[n] = field{name: name, index: idx}
					k.names = append(k.names, n)
				}
			}
		}
	}
	walk(t, nil)
	l.keys[t] = k
	return k
}

// fields applies the mapping n to the struct v at path. A key that is no
// field is an error with a suggestion, or a warning when foreign names it as
// another client's; a field given twice (under two spellings) is an error.
func (l *loader) fields(n *yaml.Node, path string, v reflect.Value, foreign map[string]string) bool {
	es, ok := l.mapping(n, path)
	if !ok {
		return false
	}
	keys := l.keysOf(v.Type())
	byName, names := keys.byName, keys.names
	if path == "" {
		names = append(slices.Clip(names), "mcpServers")
	}
	given := map[string]string{} // field name → the key as written
	for _, e := range es {
		key := join(path, e.key)
		if l.special(e, key) {
			continue
		}
		f, ok := byName[e.key]
		if !ok {
			if why, ok := foreign[e.key]; ok {
				l.warn(e.line, key, "ignored by mcp-gateway (%s)", why)
			} else {
				l.unknown(e, path, names)
			}
			continue
		}
		if prev, dup := given[f.name]; dup {
			l.errLine(e.line, key, "%s and %s both given; use one", prev, e.key)
			continue
		}
		given[f.name] = e.key
		if l.decode(e, key, join(path, f.name), v.FieldByIndex(f.index)) {
			if c, ok := v.Addr().Interface().(keyChecker); ok {
				c.checkKey(l, f.name, key, e.line)
			}
		}
	}
	return true
}

// foreignKeyer is a struct that other clients write with keys of their
// own, which are skipped with a warning.
type foreignKeyer interface {
	foreignKeys() map[string]string
}

// keyChecker is a struct whose values are checked as each key is read, so
// that the messages come in the file's order.
type keyChecker interface {
	checkKey(l *loader, field, key string, line int)
}

// decode applies e's value to v, whose Go type says what the file may hold
// there. key is the path as written, canon the field's own path, under
// which origin records where the value came from. A value that does not fit
// is an error; v then keeps what it held and decode returns false.
func (l *loader) decode(e entry, key, canon string, v reflect.Value) bool {
	if n, ok := v.Addr().Interface().(*Network); ok {
		return l.network(e, key, canon, n)
	}
	if v.Kind() == reflect.Struct {
		var foreign map[string]string
		if f, ok := v.Addr().Interface().(foreignKeyer); ok {
			foreign = f.foreignKeys()
		}
		if !l.fields(e.val, key, v, foreign) {
			return false
		}
		l.origin[canon] = origin{line: e.line, key: key}
		return true
	}
	n := l.resolve(e.val)
	if n == nil {
		return false
	}
	if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct {
		return l.structList(n, key, canon, v)
	}
	var val any
	ok := false
	switch v.Interface().(type) {
	case string:
		if ok = l.scalar(n, key, "a string"); ok {
			val = text(n)
		}
	case int:
		val, ok = l.int(n, key)
	case bool:
		val, ok = l.bool(n, key)
	case []string:
		val, ok = l.strList(n, key)
	case map[string]string:
		val, ok = l.strMap(n, key, canon)
	default:
		panic(fmt.Sprintf("config: no decoding for %s (%s)", v.Type(), canon))
	}
	if ok {
		v.Set(reflect.ValueOf(val))
		l.origin[canon] = origin{line: e.line, key: key}
	}
	return ok
}

// structList decodes a list of mappings into v, a slice of structs, each
// item as a struct at key[i]; null is the empty list. The list replaces
// what v held, as every list does.
func (l *loader) structList(n *yaml.Node, key, canon string, v reflect.Value) bool {
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	if !isNull(n) {
		if n.Kind != yaml.SequenceNode {
			l.errLine(n.Line, key, "must be a list of mappings, not %s", kindName(n))
			return false
		}
		for i, c := range n.Content {
			item := reflect.New(v.Type().Elem()).Elem()
			path := fmt.Sprintf("%s[%d]", key, i)
			if c = l.resolve(c); c == nil {
				return false
			}
			if c.Kind != yaml.MappingNode {
				l.errLine(c.Line, path, "must be a mapping, not %s", kindName(c))
				return false
			}
			if !l.fields(c, path, item, nil) {
				return false
			}
			l.origin[fmt.Sprintf("%s[%d]", canon, i)] = origin{line: c.Line, key: path}
			out = reflect.Append(out, item)
		}
	}
	v.Set(out)
	l.origin[canon] = origin{line: n.Line, key: key}
	return true
}

// scalar reports whether n is a scalar, else records that key must be what.
func (l *loader) scalar(n *yaml.Node, key, what string) bool {
	if n.Kind != yaml.ScalarNode {
		l.errLine(n.Line, key, "must be %s, not %s", what, kindName(n))
		return false
	}
	return true
}

// text is a scalar as written: numbers and booleans too; null is "".
func text(n *yaml.Node) string {
	if isNull(n) {
		return ""
	}
	return n.Value
}

// int decodes an integer (a float without a fraction too); null is 0.
func (l *loader) int(n *yaml.Node, key string) (int, bool) {
	if !l.scalar(n, key, "an integer") {
		return 0, false
	}
	switch n.ShortTag() {
	case "!!null":
		return 0, true
	case "!!int":
		var v int64
		if err := n.Decode(&v); err != nil || v > math.MaxInt32 || v < math.MinInt32 {
			l.errLine(n.Line, key, "integer %s is out of range", truncate(n.Value, 40))
			return 0, false
		}
		return int(v), true
	case "!!float":
		var f float64
		if err := n.Decode(&f); err == nil && f == math.Trunc(f) && f <= math.MaxInt32 && f >= math.MinInt32 {
			return int(f), true
		}
	}
	l.errLine(n.Line, key, "must be an integer, not %s", kindName(n))
	return 0, false
}

// bool decodes a boolean; null is false.
func (l *loader) bool(n *yaml.Node, key string) (bool, bool) {
	if !l.scalar(n, key, "true or false") {
		return false, false
	}
	var b bool
	if isNull(n) || n.ShortTag() == "!!bool" && n.Decode(&b) == nil {
		return b, true
	}
	l.errLine(n.Line, key, "must be true or false, not %s", kindName(n))
	return false, false
}

// strList decodes a list of strings; null is the empty list.
func (l *loader) strList(n *yaml.Node, key string) ([]string, bool) {
	if isNull(n) {
		return []string{}, true
	}
	if n.Kind != yaml.SequenceNode {
		l.errLine(n.Line, key, "must be a list of strings, not %s", kindName(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		if c = l.resolve(c); c == nil {
			return nil, false
		}
		if c.Kind != yaml.ScalarNode || isNull(c) {
			l.errLine(c.Line, fmt.Sprintf("%s[%d]", key, i), "must be a list of strings; this item is %s", kindName(c))
			return nil, false
		}
		out = append(out, c.Value)
	}
	return out, true
}

// strMap decodes a mapping of strings to strings; null is the empty map.
// origin records each key's line under canon.
func (l *loader) strMap(n *yaml.Node, key, canon string) (map[string]string, bool) {
	if n.Kind != yaml.MappingNode && !isNull(n) {
		l.errLine(n.Line, key, "must be a mapping of strings, not %s", kindName(n))
		return nil, false
	}
	es, ok := l.mapping(n, key)
	if !ok {
		return nil, false
	}
	m := map[string]string{}
	for _, x := range es {
		c := l.resolve(x.val)
		if c == nil || !l.scalar(c, join(key, x.key), "a string") {
			return nil, false
		}
		m[x.key] = text(c)
		l.origin[join(canon, x.key)] = origin{line: x.line, key: join(key, x.key)}
	}
	return m, true
}
