// Package tsdecl writes TypeScript declarations of MCP tools from their
// JSON Schemas, for a model that calls them from a script (code mode:
// gateway.find_tools and gateway.describe_tool with format "ts").
//
// The declarations take the form
//
//	type Entity = { name: string; observations: string[] };
//	interface Tools {
//	  /** Creates entities. */
//	  "memory.create_entities"(args: { entities: Entity[] }): Promise<{ entities: Entity[] }>;
//	}
//	declare var tools: Tools;
//
// because a script calls tools["memory.create_entities"](args): an
// interface member named by a string literal takes any tool name (dots,
// dashes), and an interface and a `declare var` of the same type may be
// declared again, so the declarations of two searches read as one
// program. A schema's $defs become type aliases, which is how a
// recursive schema is written at all.
//
// Schemas come from backends, so the converter is bounded: it follows
// schemas at most maxDepth deep, one tool's declaration visits at most maxSteps
// schema nodes and writes at most about maxBytes, text taken from a
// schema is cut to a length, and whatever is past a bound, or not
// understood, is unknown. A $ref is never expanded more than the bounds
// allow, so a schema cannot grow exponentially.
package tsdecl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The bounds of one tool's declaration.
const (
	maxDepth     = 24    // nested schemas
	maxSteps     = 3000  // schema nodes visited
	maxBytes     = 24000 // text taken from the schema (names, descriptions, literals)
	maxDesc      = 600   // a tool's description
	maxPropDesc  = 240   // a property's description
	maxName      = 200   // a property's name
	maxLiteral   = 160   // a const or enum value, as TypeScript
	maxEnum      = 64    // enum values written as a union
	maxLineShort = 80    // an object type this short without comments stays on one line
)

// Tool is one tool to declare.
type Tool struct {
	// Name is the name a script calls the tool by: tools[Name](args).
	Name         string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage // none when empty or null
}

// Declare returns the TypeScript declarations of the first n of tools:
// the type aliases of their schemas' $defs, the interface Tools with one
// method per tool, and the variable tools. n is as many as fit in max
// bytes, at least one (all when max is 0). A tool without an output
// schema answers in text: its result is declared string | object.
func Declare(tools []Tool, max int) (decl string, n int) {
	d := declarer{decls: make(map[string]string)}
	const open, end = "interface Tools {\n", "}\ndeclare var tools: Tools;\n"
	var aliases, members strings.Builder
	size := len(open) + len(end)
	for _, t := range tools {
		member, names, bodies := d.tool(t)
		var a strings.Builder
		for i, name := range names {
			a.WriteString("type " + name + " = " + bodies[i] + ";\n")
		}
		if max > 0 && n > 0 && size+a.Len()+len(member) > max {
			break
		}
		for i, name := range names {
			d.decls[name] = bodies[i]
		}
		aliases.WriteString(a.String())
		members.WriteString(member)
		size += a.Len() + len(member)
		n++
	}
	return aliases.String() + open + members.String() + end, n
}

// declarer declares the tools of one Declare, and the aliases they share.
type declarer struct {
	decls map[string]string // an alias's name → its type
}

// tool is t's member of the interface Tools, and the aliases it refers
// to that d does not declare yet: their names and types.
func (d *declarer) tool(t Tool) (member string, names, types []string) {
	c := &conv{names: make(map[defKey]string)}
	in := c.root(t.InputSchema)
	args := "{}"
	doc := docLines(clean(t.Description, maxDesc))
	if in != nil {
		// The arguments' descriptions are the @param lines, not
		// comments on their members again.
		var params []string
		params, c.args = c.params(in)
		doc = append(doc, params...)
		args = c.typ(in, 1, nil).s
	}
	result := "string | object"
	if out := c.root(t.OutputSchema); out != nil {
		c.output = true
		result = c.typ(out, 1, nil).s
	}
	var m strings.Builder
	m.WriteString(comment(doc, "  "))
	fmt.Fprintf(&m, "  %s(args: %s): Promise<%s>;\n", quote(t.Name), indent(args, "  "), indent(result, "  "))
	bodies := c.declare()
	r := d.name(c, bodies)
	for i, n := range r.names {
		if _, ok := d.decls[n]; !ok && !slices.Contains(names, n) {
			names = append(names, n)
			types = append(types, r.Replace(bodies[i]))
		}
	}
	return r.Replace(m.String()), names, types
}

// naming is the names a tool's defs are declared under, and the
// replacer that puts them in place of conv's placeholders.
type naming struct {
	names []string
	*strings.Replacer
}

// name names the defs of c, whose types are bodies: a def takes the name
// it has in its schema, unless an alias of that name is declared with
// another type (by another tool, or by this one for a def of the same
// name elsewhere): then it is numbered. Two tools of one server often
// share their defs: those are declared once.
func (d *declarer) name(c *conv, bodies []string) naming {
	n := len(c.defs)
	base := make([]string, n)
	for i, k := range c.defs {
		base[i] = ident(k.name[strings.LastIndexByte(k.name, '/')+1:])
	}
	// Whether a def reuses an alias depends on the names of the defs it
	// refers to: assume every def reuses the alias of its name, and
	// number those whose type then differs, until none does. Each round
	// numbers one more def or ends.
	numbered := make([]bool, n)
	for {
		names := make([]string, n)
		taken := make(map[string]bool)
		for i := range n {
			if _, ok := d.decls[base[i]]; ok && !numbered[i] && !taken[base[i]] {
				names[i], taken[base[i]] = base[i], true
			}
		}
		for i := range n {
			if names[i] != "" {
				continue
			}
			name := base[i]
			for k := 2; taken[name] || d.decls[name] != ""; k++ {
				name = base[i] + strconv.Itoa(k)
			}
			names[i], taken[name] = name, true
		}
		pairs := make([]string, 0, 2*n)
		for i := range n {
			pairs = append(pairs, placeholder(i), names[i])
		}
		r := naming{names, strings.NewReplacer(pairs...)}
		again := false
		for i := range n {
			if decl, ok := d.decls[names[i]]; ok && decl != r.Replace(bodies[i]) {
				numbered[i], again = true, true
			}
		}
		if !again {
			return r
		}
	}
}

// placeholder stands for the name of a tool's i'th def until it is
// chosen (declarer.name). Nothing else written has a NUL: quote escapes
// it, and clean makes it a space.
func placeholder(i int) string { return "\x00" + strconv.Itoa(i) + "\x00" }

// conv converts the schemas of one tool.
type conv struct {
	schema *rootRef // the root being converted: what a $ref points into
	steps  int
	bytes  int
	names  map[defKey]string // the defs referred to by name, to their placeholders
	defs   []defKey          // those defs, in order
	// expanding are the pointers other than defs being expanded, the
	// innermost last: one met again is a cycle.
	expanding []defKey
	args      *object // the arguments' object schema, whose properties params describes
	// shown holds the arguments' members described, each with its
	// description; output is set while the result's type is written,
	// where a member described the same is not described again (an
	// output schema often repeats the input's members).
	shown  map[string]string
	output bool
}

type defKey struct {
	root *rootRef // the schema the def is in: a tool's two schemas have their own
	name string   // its pointer
}

type rootRef struct{ v any }

// root decodes a schema and makes it the one refs point into; nil when
// there is none. A schema that is not JSON is unknown ({}).
func (c *conv) root(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v, err := decode(raw)
	if err != nil {
		v = &object{}
	}
	c.schema = &rootRef{v}
	return v
}

// ts is a TypeScript type and how tightly it binds.
type ts struct {
	s    string
	prec int
	// cycle marks a reference back to a type being written: a union
	// or an intersection drops it (it adds no values: A = string | A is
	// string), elsewhere it is unknown.
	cycle bool
}

const (
	precUnion = iota
	precIntersection
	precPrimary
)

var (
	unknown = ts{s: "unknown", prec: precPrimary}
	cycle   = ts{s: "unknown", prec: precPrimary, cycle: true}
)

// over reports whether the bounds are reached: everything from here is
// unknown.
func (c *conv) over() bool { return c.steps > maxSteps || c.bytes > maxBytes }

// take counts n bytes of text taken from the schema.
func (c *conv) take(n int) { c.bytes += n }

// typ is the type of schema s, depth schemas deep. open holds the defs
// whose declaration is being written with s at its top, not inside an
// object or array: a reference to one of them there would make the
// alias circular, which TypeScript refuses, so such a reference is
// expanded instead, and a cycle when it comes back to itself.
func (c *conv) typ(s any, depth int, open []defKey) ts {
	c.steps++
	if depth > maxDepth || c.over() {
		return unknown
	}
	depth++
	switch s := s.(type) {
	case bool:
		if s {
			return unknown
		}
		return prim("never")
	case *object:
		return c.object(s, depth, open)
	}
	return unknown
}

func (c *conv) object(s *object, depth int, open []defKey) ts {
	if ref, ok := s.get("$ref").(string); ok {
		return c.ref(ref, depth, open)
	}
	var parts []ts // intersected
	switch {
	case s.has("const"):
		if l, ok := c.literal(s.get("const"), 0); ok {
			return ts{s: l, prec: literalPrec(l)}
		}
	case s.get("enum") != nil:
		if u, ok := c.enum(s.get("enum")); ok {
			return c.nullable(s, u)
		}
	}
	var base []ts // a union: one per type
	for _, t := range types(s) {
		base = append(base, c.ofType(t, s, depth, open))
	}
	if len(base) > 0 {
		parts = append(parts, union(base))
	}
	for _, k := range [...]string{"anyOf", "oneOf"} {
		if subs, ok := s.get(k).([]any); ok && len(subs) > 0 {
			var alts []ts
			for _, sub := range subs {
				alts = append(alts, c.typ(sub, depth, open))
			}
			parts = append(parts, union(alts))
		}
	}
	if subs, ok := s.get("allOf").([]any); ok {
		for _, sub := range subs {
			parts = append(parts, c.typ(sub, depth, open))
		}
	}
	return c.nullable(s, intersection(parts))
}

// nullable adds null to t for OpenAPI's nullable: true.
func (c *conv) nullable(s *object, t ts) ts {
	if s.get("nullable") == true && t != unknown {
		return union([]ts{t, prim("null")})
	}
	return t
}

// types are the JSON types s admits, from "type" (a name or a list of
// them), else from the keywords it has; none when any type is.
func types(s *object) []string {
	switch t := s.get("type").(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if n, ok := e.(string); ok && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
	switch {
	case s.has("properties") || s.has("additionalProperties") || s.has("patternProperties"):
		return []string{"object"}
	case s.has("items") || s.has("prefixItems"):
		return []string{"array"}
	}
	return nil
}

// ofType is s as a value of JSON type t.
func (c *conv) ofType(t string, s *object, depth int, open []defKey) ts {
	switch t {
	case "string":
		return prim("string")
	case "number", "integer":
		return prim("number")
	case "boolean":
		return prim("boolean")
	case "null":
		return prim("null")
	case "array":
		return c.array(s, depth)
	case "object":
		return c.members(s, depth)
	}
	return unknown
}

// array is an array type; its elements are a new top: a def named there
// is referred to by name.
func (c *conv) array(s *object, depth int) ts {
	var prefix []any
	items := s.get("items")
	if p, ok := s.get("prefixItems").([]any); ok {
		prefix = p
	} else if p, ok := items.([]any); ok { // draft 4 to 2019-09 tuples
		prefix, items = p, s.get("additionalItems")
	}
	if len(prefix) == 0 {
		el := unknown
		if items != nil {
			el = c.typ(items, depth, nil)
		}
		return prim(paren(el, precPrimary) + "[]")
	}
	var els []string
	for _, p := range prefix {
		els = append(els, c.typ(p, depth, nil).s)
	}
	if items != false {
		rest := unknown
		if items != nil && items != true {
			rest = c.typ(items, depth, nil)
		}
		els = append(els, "..."+paren(rest, precPrimary)+"[]")
	}
	return prim("[" + strings.Join(els, ", ") + "]")
}

// members is an object type: its properties (required or optional,
// each with its description), and for additionalProperties or
// patternProperties an index signature, intersected when there are
// properties too (TypeScript would have each property's type fit the
// index signature's).
func (c *conv) members(s *object, depth int) ts {
	props, _ := s.get("properties").(*object)
	required := make(map[string]bool)
	if r, ok := s.get("required").([]any); ok {
		for _, n := range r {
			if n, ok := n.(string); ok {
				required[n] = true
			}
		}
	}
	var lines []string
	var index []ts
	commented, long := false, false
	for _, name := range props.keysOrNil() {
		if c.over() {
			lines = append(lines, "[key: string]: unknown;")
			break
		}
		if len(name) > maxName {
			// A name this long is not one a script writes; it would
			// take the whole budget.
			if !long {
				index, long = append(index, unknown), true
			}
			continue
		}
		c.take(len(name))
		sub := props.get(name)
		t := c.typ(sub, depth, nil)
		opt := "?"
		if required[name] {
			opt = ""
		}
		line := quoteKey(name) + opt + ": " + t.s + ";"
		if m, ok := sub.(*object); ok && s != c.args {
			if d := clean(str(m.get("description")), maxPropDesc); d != "" && !c.seen(name, d) {
				c.take(len(d))
				line = comment(docLines(d), "") + line
				commented = true
			}
		}
		lines = append(lines, line)
	}
	if ap, ok := s.get("additionalProperties").(*object); ok {
		index = append(index, c.typ(ap, depth, nil))
	}
	if pp, ok := s.get("patternProperties").(*object); ok {
		for _, p := range pp.keys {
			index = append(index, c.typ(pp.get(p), depth, nil))
		}
	}
	if len(lines) == 0 {
		if len(index) == 0 {
			if s.has("properties") || s.get("additionalProperties") == false {
				return prim("{}") // no arguments
			}
			index = []ts{unknown}
		}
		return prim("{ [key: string]: " + union(index).s + " }")
	}
	obj := block(lines, commented)
	if len(index) == 0 {
		return prim(obj)
	}
	return ts{s: obj + " & { [key: string]: " + union(index).s + " }", prec: precIntersection}
}

// block writes an object type's member lines: on one line when short and
// without comments, else one member a line, indented (the lines of a
// member's type, written the same way, one step more).
func block(lines []string, commented bool) string {
	if !commented {
		one := "{ " + strings.TrimSuffix(strings.Join(lines, " "), ";") + " }"
		if len(one) <= maxLineShort && !strings.Contains(one, "\n") {
			return one
		}
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, l := range lines {
		b.WriteString("  " + indent(l, "  ") + "\n")
	}
	b.WriteString("}")
	return b.String()
}

// indent puts pad before each line of s but the first.
func indent(s, pad string) string {
	return strings.ReplaceAll(s, "\n", "\n"+pad)
}

// ref is the type a $ref points to. A def ("#/$defs/NAME",
// "#/definitions/NAME") is declared once as a type alias and referred
// to by name, except where that would make an alias circular (open);
// any other local pointer is expanded where it is used, and unknown
// where it comes back to itself. A remote ref is unknown.
func (c *conv) ref(ref string, depth int, open []defKey) ts {
	ptr, ok := refPointer(ref)
	if !ok {
		return unknown
	}
	key := defKey{c.schema, ptr}
	target, ok := resolve(c.schema.v, ptr)
	switch {
	case !ok:
		return unknown
	case !isDef(ptr):
		if slices.Contains(c.expanding, key) {
			return cycle
		}
		c.expanding = append(c.expanding, key)
		defer func() { c.expanding = c.expanding[:len(c.expanding)-1] }()
		return c.typ(target, depth, open)
	case len(open) == 0:
		return prim(c.name(key))
	case slices.Contains(open, key):
		return cycle // back to itself before an object or array
	}
	return c.typ(target, depth, append(open[:len(open):len(open)], key))
}

// refPointer is the JSON pointer of a local $ref ("#/$defs/a%20b").
func refPointer(ref string) (string, bool) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return "", false
	}
	if p, err := url.PathUnescape(ptr); err == nil {
		ptr = p
	}
	return ptr, true
}

// isDef reports whether a pointer names a def: "/$defs/NAME" or
// "/definitions/NAME".
func isDef(ptr string) bool {
	for _, p := range [...]string{"/$defs/", "/definitions/"} {
		if rest, ok := strings.CutPrefix(ptr, p); ok && rest != "" && !strings.Contains(rest, "/") {
			return true
		}
	}
	return false
}

// name is the placeholder of a def's alias name (declarer.name chooses
// the name), to be declared by declare.
func (c *conv) name(key defKey) string {
	if n, ok := c.names[key]; ok {
		return n
	}
	n := placeholder(len(c.defs))
	c.names[key] = n
	c.defs = append(c.defs, key)
	return n
}

// declare returns the types of the defs named so far, and of those they
// name, in order.
func (c *conv) declare() []string {
	var out []string
	for i := 0; i < len(c.defs); i++ {
		key := c.defs[i]
		c.schema = key.root
		target, _ := resolve(key.root.v, key.name)
		out = append(out, c.typ(target, 0, []defKey{key}).s)
	}
	return out
}

// resolve follows a JSON pointer (RFC 6901) from v.
func resolve(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch node := v.(type) {
		case *object:
			next, ok := node.vals[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// enum is the union of an enum's values, when they are few and short.
func (c *conv) enum(v any) (ts, bool) {
	vals, ok := v.([]any)
	if !ok || len(vals) == 0 || len(vals) > maxEnum {
		return ts{}, false
	}
	alts := make([]ts, 0, len(vals))
	for _, e := range vals {
		l, ok := c.literal(e, 0)
		if !ok {
			return ts{}, false
		}
		alts = append(alts, ts{s: l, prec: literalPrec(l)})
	}
	return union(alts), true
}

// literal is a JSON value as a TypeScript literal type: strings quoted,
// numbers as written, objects as object types and arrays as tuples; not
// ok when it is longer than maxLiteral.
func (c *conv) literal(v any, depth int) (string, bool) {
	if depth > 4 {
		return "", false
	}
	var s string
	switch v := v.(type) {
	case nil:
		s = "null"
	case bool:
		s = strconv.FormatBool(v)
	case json.Number:
		s = v.String()
	case string:
		s = quote(v)
	case []any:
		var els []string
		for _, e := range v {
			l, ok := c.literal(e, depth+1)
			if !ok {
				return "", false
			}
			els = append(els, l)
			if len(els) > maxLiteral {
				return "", false
			}
		}
		s = "[" + strings.Join(els, ", ") + "]"
	case *object:
		var ms []string
		for _, k := range v.keys {
			l, ok := c.literal(v.vals[k], depth+1)
			if !ok {
				return "", false
			}
			ms = append(ms, quoteKey(k)+": "+l)
			if len(ms) > maxLiteral {
				return "", false
			}
		}
		s = "{ " + strings.Join(ms, "; ") + " }"
		if len(ms) == 0 {
			s = "{}"
		}
	default:
		return "", false
	}
	if len(s) > maxLiteral {
		return "", false
	}
	c.take(len(s))
	return s, true
}

// literalPrec is how tightly a literal binds: a negative number is
// parenthesised before [].
func literalPrec(l string) int {
	if strings.HasPrefix(l, "-") {
		return precIntersection
	}
	return precPrimary
}

// params are the @param lines of the arguments' top-level properties,
// and the schema they are the properties of.
func (c *conv) params(in any) ([]string, *object) {
	s, ok := in.(*object)
	if !ok {
		return nil, nil
	}
	if ref, ok := s.get("$ref").(string); ok {
		if ptr, ok := refPointer(ref); ok {
			t, _ := resolve(c.schema.v, ptr)
			s, _ = t.(*object)
		}
	}
	props, _ := s.get("properties").(*object)
	var out []string
	for _, name := range props.keysOrNil() {
		p, _ := props.get(name).(*object)
		if d := clean(str(p.get("description")), maxPropDesc); d != "" {
			if c.over() {
				break
			}
			c.take(len(name) + len(d))
			c.seen(name, d)
			lines := docLines(d)
			lines[0] = "@param args." + paramName(name) + " " + lines[0]
			out = append(out, lines...)
		}
	}
	return out, s
}

// seen reports whether the result's member name is described as d in
// the arguments; in the arguments, it records that it is.
func (c *conv) seen(name, d string) bool {
	if c.output {
		return c.shown[name] == d
	}
	if c.shown == nil {
		c.shown = make(map[string]string)
	}
	c.shown[name] = d
	return false
}

// paramName is a property's name in a @param line: as is when it is an
// identifier, else in brackets and quotes.
func paramName(n string) string {
	if identRE.MatchString(n) {
		return n
	}
	return "[" + quote(n) + "]"
}

// union joins alternatives with |, dropping repeats; unknown absorbs the
// rest.
func union(alts []ts) ts {
	var out []string
	var kept []ts
	cycles := false
	for _, a := range alts {
		switch {
		case a.cycle:
			cycles = true
			continue
		case a == unknown:
			return unknown
		}
		s := a.s // | is associative
		if a.prec != precUnion {
			s = paren(a, precIntersection)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
			kept = append(kept, a)
		}
	}
	switch {
	case len(out) == 0 && cycles:
		return cycle
	case len(out) == 0:
		return unknown
	case len(out) == 1:
		return kept[0]
	}
	return ts{s: strings.Join(out, " | "), prec: precUnion}
}

// intersection joins parts with &, dropping unknown ones (which say
// nothing) and repeats.
func intersection(parts []ts) ts {
	var kept []ts
	var out []string
	cycles := false
	for _, p := range parts {
		if p.cycle {
			cycles = true
			continue
		}
		if p == unknown {
			continue
		}
		s := paren(p, precPrimary)
		if p.prec == precIntersection {
			s = p.s // & is associative
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
			kept = append(kept, p)
		}
	}
	switch {
	case len(out) == 0 && cycles:
		return cycle
	case len(out) == 0:
		return unknown
	case len(out) == 1:
		return kept[0]
	}
	return ts{s: strings.Join(out, " & "), prec: precIntersection}
}

// paren is t's text, in parentheses when it binds less tightly than prec.
func paren(t ts, prec int) string {
	if t.prec < prec {
		return "(" + t.s + ")"
	}
	return t.s
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// quoteKey is a property name: as is when it is an identifier, else a
// string literal.
func quoteKey(n string) string {
	if identRE.MatchString(n) {
		return n
	}
	return quote(n)
}

// quote is s as a TypeScript string literal: JSON's escapes are
// JavaScript's, and encoding/json escapes U+2028 and U+2029 and replaces
// invalid UTF-8.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ident makes a def's name an identifier (an alias name): other
// characters become _, and a name that does not start as an identifier
// does, or is reserved, gets a leading _.
func ident(n string) string {
	var b strings.Builder
	for _, r := range n {
		if r < utf8.RuneSelf && (r == '_' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' || reserved[s] {
		s = "_" + s
	}
	return s
}

// reserved are the names a type alias may not have: TypeScript's
// predefined types and reserved words, the standard library's global
// types a script's program has (an alias named Error would clash with
// them), and the interface declared here.
var reserved = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`any unknown never void undefined null object string number boolean bigint symbol
		break case catch class const continue debugger default delete do else enum export extends false finally for
		function if import in instanceof new return super switch this throw true try typeof var while with
		implements interface let package private protected public static yield type as async await declare
		Tools Promise PromiseLike Array ReadonlyArray Record Object String Number Boolean BigInt Symbol Function
		Date RegExp Error TypeError RangeError SyntaxError Map Set WeakMap WeakSet JSON Math Reflect Proxy Iterator
		ArrayBuffer DataView Uint8Array Int8Array Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array
		Partial Required Readonly Pick Omit Exclude Extract NonNullable Awaited ReturnType Parameters InstanceType
		Uppercase Lowercase Capitalize Uncapitalize ThisType`) {
		m[w] = true
	}
	return m
}()

// clean is text from a schema made fit for a doc comment: trimmed, cut
// to max bytes, line breaks kept as \n and other control characters
// spaces, and */ broken so the comment does not end in it.
func clean(s string, max int) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > max {
		n := max
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = strings.TrimSpace(s[:n]) + "…"
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.ReplaceAll(s, "*/", "*\\/")
}

// docLines splits cleaned text into a doc comment's lines, without blank
// ones at the ends and without repeated blank lines.
func docLines(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// comment is a doc comment of lines at pad, ending in a line break: on
// one line when it is one line.
func comment(lines []string, pad string) string {
	if len(lines) == 0 {
		return ""
	}
	if len(lines) == 1 {
		return pad + "/** " + lines[0] + " */\n"
	}
	var b strings.Builder
	b.WriteString(pad + "/**\n")
	for _, l := range lines {
		if l == "" {
			b.WriteString(pad + " *\n")
		} else {
			b.WriteString(pad + " * " + l + "\n")
		}
	}
	b.WriteString(pad + " */\n")
	return b.String()
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// prim is a type that needs no parentheses.
func prim(s string) ts { return ts{s: s, prec: precPrimary} }
