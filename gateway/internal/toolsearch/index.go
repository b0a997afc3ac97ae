// Package toolsearch is lazy mode's tool search, what gateway.find_tools
// ranks with: BM25F over each backend tool's fields (its name, title,
// description, parameters, and its server's name and instructions), an
// index built once per tool table that reuses the analysis of every tool
// whose definition did not change. The gateway keeps the meta tools
// themselves (their arguments, the policy's visibility, the answer).
package toolsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Why our own: the search is over hundreds to a few thousand short
// documents, each query a handful of words; a ranking function, a light
// stemmer, stop words, synonyms and an edit distance are under 900 lines
// with their comments and add 57 KB to the stripped binary, while the Go
// full-text libraries bring their own storage, analysers and query
// languages for features this does not use (docs/benchmarks.md).

const (
	// MaxWords bounds the distinct words of one query (WithinWords): each
	// word costs a pass over its postings, and no real query needs more.
	MaxWords = 32
	// smallSchema is the largest input schema (compact JSON bytes) a
	// find_tools result carries; a tool with a larger one is described by
	// describe_tool.
	smallSchema = 600
)

// The fields of a tool, and their weights: a word in a tool's name says
// most about what it does, one in its server's instructions least.
const (
	fName = iota
	fTitle
	fDesc
	fParams
	fServer // the server's name and the tool's prefix
	fInstr  // the server's instructions
	nFields
)

var (
	fieldWeight = [nFields]float64{fName: 4, fTitle: 2.5, fDesc: 1, fParams: 0.5, fServer: 2, fInstr: 0.15}
	fieldB      = [nFields]float64{fName: 0.3, fTitle: 0.3, fDesc: 0.75, fParams: 0.75, fServer: 0, fInstr: 0.75}
)

// bm25K1 is BM25's term-frequency saturation; nameBoost is what a tool
// whose whole name the query matched gains, and serverBoost what a tool
// gains whose server the query names (score).
const (
	bm25K1      = 1.2
	nameBoost   = 4
	serverBoost = 3
)

// How much a word matched another way counts, against a match of the same
// term: a term one or two edits away (a typo), a synonym (text.go), or
// a name term that starts or ends with the word (sequentialthinking for
// "thinking").
const (
	typoWeight1   = 0.4
	typoWeight2   = 0.25
	synonymWeight = 0.5
	affixWeight   = 0.5
	minAffixWord  = 5 // shorter words would find "thread" for "read"
)

// Doc is one tool to index.
type Doc struct {
	Name     string          // its front name: what a Hit names
	Own      string          // its own name, on its server
	Server   string          // its server's name
	Def      json.RawMessage // its definition as listed: a tool whose Def is unchanged keeps its analysis (New)
	Tool     *mcp.Tool       // Def, decoded
	ReadOnly bool            // what its Hit says
}

// toolDoc is one tool, analysed: what does not depend on the other tools.
type toolDoc struct {
	def    json.RawMessage // the definition it was analysed from
	found  Hit             // its entry in a result
	server string
	names  []string // its front name and own name, lower-case: exact and prefix matches
	nNames int      // how many distinct terms its own name has
	terms  []docTerm
	lens   [nFields]int // words per field (the tool's own fields)
}

type docTerm struct {
	term string
	tf   [nFields]uint16
}

// serverDoc is a server's fields, shared by its tools.
type serverDoc struct {
	terms []docTerm
	lens  [nFields]int
	tools []int32 // its tools, by index
}

// Index is the index of one tool table. It is read only once built, and
// safe for concurrent use.
type Index struct {
	docs     []*toolDoc // in front-name order: ties keep this order
	byName   map[string]int
	servers  map[string]*serverDoc
	names    []string // the servers, sorted: what an empty result suggests
	postings map[string][]posting
	srvTerms map[string][]srvPosting
	nameAt   []int            // where each tool's name terms start in score's table; one more at the end
	byLen    map[int][]string // every term, by length, sorted: typo candidates
	nameVoc  []string         // terms of tools' names, sorted: affix candidates
}

// posting is one tool's weighted, length-normalised frequency of a term
// in its own fields.
type posting struct {
	doc  int32
	tf   float32
	name int16 // which of the tool's name terms it is, or -1
}

// srvPosting is a server's, added to each of its tools'.
type srvPosting struct {
	srv  *serverDoc
	tf   float32
	name bool // the term is in the server's name (or prefix)
}

// Hit is one tool found: what a model needs to call it, as find_tools
// answers it.
type Hit struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	ReadOnly    bool            `json:"readOnly,omitempty"`
}

// New indexes docs, in any order: ties in a ranking keep their order by
// Name. Tools whose definition is the same as in prev (which may be nil)
// keep prev's analysis; instructions are the servers' instructions,
// searched for each of a server's tools.
func New(docs []Doc, instructions map[string]string, prev *Index) *Index {
	ix := &Index{
		byName:   make(map[string]int),
		servers:  make(map[string]*serverDoc),
		postings: make(map[string][]posting),
		srvTerms: make(map[string][]srvPosting),
		byLen:    make(map[int][]string),
	}
	byName := func(a, b Doc) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(docs, byName) {
		docs = slices.Clone(docs)
		slices.SortStableFunc(docs, byName)
	}
	prefixes := make(map[string]map[string]bool)
	for _, r := range docs {
		name := r.Name
		d := prev.reuse(name, r.Def)
		if d == nil {
			d = analyse(r)
		}
		ix.byName[name] = len(ix.docs)
		ix.docs = append(ix.docs, d)
		if ix.servers[r.Server] == nil {
			ix.servers[r.Server] = &serverDoc{}
			prefixes[r.Server] = make(map[string]bool)
		}
		s := ix.servers[r.Server]
		s.tools = append(s.tools, int32(len(ix.docs)-1))
		if p := strings.TrimSuffix(name, r.Own); p != name {
			prefixes[r.Server][p] = true
		}
	}
	for name, s := range ix.servers {
		ix.names = append(ix.names, name)
		text := [nFields][]string{}
		text[fServer] = terms(nil, name, true)
		for _, p := range sortedKeys(prefixes[name]) {
			text[fServer] = terms(text[fServer], p, true)
		}
		text[fInstr] = terms(nil, instructions[name], false)
		s.terms, s.lens = countTerms(text)
	}
	slices.Sort(ix.names)
	ix.weigh()
	return ix
}

// reuse returns prev's analysis of the tool name when its definition is
// the same.
func (prev *Index) reuse(name string, def json.RawMessage) *toolDoc {
	if prev == nil {
		return nil
	}
	if i, ok := prev.byName[name]; ok && bytes.Equal(prev.docs[i].def, def) {
		return prev.docs[i]
	}
	return nil
}

// analyse splits a tool's fields into terms and builds its result entry.
func analyse(r Doc) *toolDoc {
	t := r.Tool
	d := &toolDoc{def: r.Def, server: r.Server, names: []string{strings.ToLower(r.Name), strings.ToLower(r.Own)}}
	text := [nFields][]string{}
	text[fName] = terms(nil, r.Own, true)
	text[fTitle] = terms(nil, t.Title, false)
	if t.Annotations != nil && t.Annotations.Title != t.Title {
		text[fTitle] = terms(text[fTitle], t.Annotations.Title, false)
	}
	text[fDesc] = terms(nil, t.Description, false)
	text[fParams] = paramTerms(nil, schemaOf(t.InputSchema))
	d.terms, d.lens = countTerms(text)
	d.nNames = len(dedupe(text[fName]))

	d.found = Hit{Name: r.Name, Description: firstLine(t.Description)}
	// A schema many times the size cannot compact to a small one.
	if raw := schemaOf(t.InputSchema); len(raw) <= 8*smallSchema {
		if s := compactSchema(raw); len(s) <= smallSchema {
			d.found.InputSchema = s
		}
	}
	d.found.ReadOnly = r.ReadOnly
	return d
}

func schemaOf(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	raw, _ := json.Marshal(v)
	return raw
}

// compactSchema is an input schema without insignificant whitespace and
// without its "$schema" member, which tells a model nothing.
func compactSchema(s json.RawMessage) json.RawMessage {
	if wire.Member(s, "$schema") != nil {
		if out, err := wire.SetMember(s, "$schema", nil); err == nil {
			s = out
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, s) != nil {
		return s
	}
	return buf.Bytes()
}

// paramTerms appends the terms of an input schema's property names,
// descriptions and enumerated values, through nested objects and arrays,
// to dst. At most 2,000 terms are taken: a schema of megabytes costs no
// more.
func paramTerms(dst []string, schema json.RawMessage) []string {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return dst
	}
	return schemaTerms(dst, v, 0)
}

func schemaTerms(dst []string, v any, depth int) []string {
	s, ok := v.(map[string]any)
	if !ok || depth > 4 || len(dst) > 2000 {
		return dst
	}
	if d, ok := s["description"].(string); ok && depth > 0 {
		dst = terms(dst, d, false)
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, e := range enum {
			if str, ok := e.(string); ok {
				dst = terms(dst, str, false)
			}
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, name := range sortedKeys(props) {
			dst = terms(dst, name, true)
			dst = schemaTerms(dst, props[name], depth+1)
		}
	}
	dst = schemaTerms(dst, s["items"], depth+1)
	for _, k := range [...]string{"anyOf", "oneOf"} {
		subs, _ := s[k].([]any)
		for _, sub := range subs {
			dst = schemaTerms(dst, sub, depth+1)
		}
	}
	return dst
}

// countTerms counts the terms of each field.
func countTerms(text [nFields][]string) ([]docTerm, [nFields]int) {
	var lens [nFields]int
	at := make(map[string]int)
	var out []docTerm
	for f, ts := range text {
		lens[f] = len(ts)
		for _, t := range ts {
			i, ok := at[t]
			if !ok {
				i = len(out)
				at[t] = i
				out = append(out, docTerm{term: t})
			}
			if out[i].tf[f] < math.MaxUint16 {
				out[i].tf[f]++
			}
		}
	}
	return out, lens
}

// weigh builds the postings: each term's weighted frequency in each
// tool's fields (BM25F), normalised by the field's length against its
// average over the tools.
func (ix *Index) weigh() {
	var avg [nFields]float64
	for _, d := range ix.docs {
		for f := range nFields {
			avg[f] += float64(d.lens[f])
		}
	}
	for _, s := range ix.servers {
		for f := range nFields {
			avg[f] += float64(s.lens[f] * len(s.tools))
		}
	}
	for f := range avg {
		avg[f] = max(avg[f]/float64(max(len(ix.docs), 1)), 1)
	}
	tf := func(t docTerm, lens [nFields]int) float32 {
		var sum float64
		for f := range nFields {
			if t.tf[f] > 0 {
				sum += fieldWeight[f] * float64(t.tf[f]) / (1 - fieldB[f] + fieldB[f]*float64(lens[f])/avg[f])
			}
		}
		return float32(sum)
	}
	vocab := make(map[string]bool)
	names := make(map[string]bool)
	ix.nameAt = make([]int, len(ix.docs)+1)
	for i, d := range ix.docs {
		ix.nameAt[i+1] = ix.nameAt[i] + d.nNames
		nameTerm := int16(0)
		for _, t := range d.terms {
			p := posting{int32(i), tf(t, d.lens), -1}
			if t.tf[fName] > 0 && nameTerm < math.MaxInt16 {
				p.name = nameTerm
				nameTerm++
			}
			ix.postings[t.term] = append(ix.postings[t.term], p)
			vocab[t.term] = true
			if t.tf[fName] > 0 {
				names[t.term] = true
			}
		}
	}
	for _, name := range ix.names {
		s := ix.servers[name]
		for _, t := range s.terms {
			ix.srvTerms[t.term] = append(ix.srvTerms[t.term], srvPosting{s, tf(t, s.lens), t.tf[fServer] > 0})
			vocab[t.term] = true
		}
	}
	for _, t := range sortedKeys(vocab) {
		ix.byLen[len(t)] = append(ix.byLen[len(t)], t)
	}
	for _, t := range sortedKeys(names) {
		if len(t) > minAffixWord {
			ix.nameVoc = append(ix.nameVoc, t)
		}
	}
}

// Query is one search.
type Query struct {
	Query  string
	Server string
	Limit  int
	// Visible, when not nil, says which tools (by front name) may be
	// found: the policy's.
	Visible func(name string) bool
}

// Find returns at most q.Limit tools, best first: tools whose name is the
// query, then tools whose name starts with it, then by BM25F score, ties in
// name order. A query of no words (after stop words) lists the tools in
// name order. It stops with ctx's error when ctx is done.
func (ix *Index) Find(ctx context.Context, q Query) ([]Hit, error) {
	inServer := func(i int) bool {
		return (q.Server == "" || ix.docs[i].server == q.Server) && (q.Visible == nil || q.Visible(ix.docs[i].found.Name))
	}
	type hit struct {
		doc   int
		tier  int // 2: the name is the query, 1: it starts with it
		score float64
	}
	var hits []hit
	whole := strings.ToLower(strings.TrimSpace(q.Query))
	qterms := ix.queryTerms(q.Query)
	if len(qterms) == 0 && whole == "" {
		for i := 0; i < len(ix.docs) && len(hits) < q.Limit; i++ {
			if inServer(i) {
				hits = append(hits, hit{doc: i})
			}
		}
	} else {
		scores, err := ix.score(ctx, qterms)
		if err != nil {
			return nil, err
		}
		// The best q.Limit, kept in order as they come: the rest of the
		// tools cost one comparison each.
		better := func(a, b hit) bool { return a.tier > b.tier || a.tier == b.tier && a.score > b.score }
		for i, d := range ix.docs {
			if !inServer(i) {
				continue
			}
			h := hit{doc: i, score: scores[i]}
			if whole != "" && !strings.ContainsAny(whole, " \t\n") {
				for _, n := range d.names {
					switch {
					case n == whole:
						h.tier = max(h.tier, 2)
					case len(whole) >= 3 && strings.HasPrefix(n, whole):
						h.tier = max(h.tier, 1)
					}
				}
			}
			if h.tier == 0 && h.score <= 0 || len(hits) == q.Limit && !better(h, hits[len(hits)-1]) {
				continue
			}
			// After the last one it beats; ties stay in name order.
			at := len(hits)
			for at > 0 && better(h, hits[at-1]) {
				at--
			}
			hits = slices.Insert(hits, at, h)
			if len(hits) > q.Limit {
				hits = hits[:q.Limit]
			}
		}
	}
	out := make([]Hit, 0, min(len(hits), q.Limit))
	for _, h := range hits[:min(len(hits), q.Limit)] {
		out = append(out, ix.docs[h.doc].found)
	}
	return out, nil
}

// score is every tool's score for the query terms: BM25F, plus nameBoost
// times the share of the tool's name that the query matched, so that of
// two tools whose text matches as well, the one whose name the query says
// comes first (create_repository for "create a new GitHub repository", not
// create_branch, whose description says "repository" too). The sums run in
// a fixed order (terms as given, postings in tool order), so that equal
// queries give equal scores, bit for bit.
func (ix *Index) score(ctx context.Context, qterms []string) ([]float64, error) {
	scores := make([]float64, len(ix.docs))
	tf := make([]float64, len(ix.docs)) // one query term's weighted frequency per tool
	// Per tool, the best match of each of its name terms: tool i's are
	// named[ix.nameAt[i]:ix.nameAt[i+1]].
	named := make([]float64, ix.nameAt[len(ix.docs)])
	var hasName []int32
	var touched []int32
	for _, qt := range qterms {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, m := range ix.expand(qt) {
			touched = touched[:0]
			add := func(doc int32, v float64) {
				if tf[doc] == 0 {
					touched = append(touched, doc)
				}
				tf[doc] += v
			}
			for _, p := range ix.postings[m.term] {
				add(p.doc, float64(p.tf))
				if p.name >= 0 {
					at := ix.nameAt[p.doc] + int(p.name)
					if named[at] == 0 {
						hasName = append(hasName, p.doc)
					}
					named[at] = max(named[at], m.weight)
				}
			}
			for _, p := range ix.srvTerms[m.term] {
				for _, doc := range p.srv.tools {
					add(doc, float64(p.tf))
				}
			}
			n, df := float64(len(ix.docs)), float64(len(touched))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			slices.Sort(touched)
			for _, doc := range touched {
				scores[doc] += m.weight * idf * tf[doc] * (bm25K1 + 1) / (bm25K1 + tf[doc])
				tf[doc] = 0
			}
		}
	}
	// A query that names a server wants its tools.
	for _, qt := range qterms {
		for _, p := range ix.srvTerms[qt] {
			if p.name {
				for _, doc := range p.srv.tools {
					scores[doc] += serverBoost
				}
			}
		}
	}
	slices.Sort(hasName)
	for _, doc := range slices.Compact(hasName) {
		best := named[ix.nameAt[doc]:ix.nameAt[doc+1]]
		var sum float64
		for _, w := range best {
			sum += w
		}
		scores[doc] += nameBoost * sum / float64(len(best))
	}
	return scores, nil
}

// queryTerms are the terms of a query: its words' (text.go), and
// those of two neighbouring words written as one where a tool has that
// word, or it has synonyms ("look up" is lookup, "screen shot" is
// screenshot).
func (ix *Index) queryTerms(query string) []string {
	ws := words(withoutURLs(query), false)
	var out []string
	for i, w := range ws {
		if stopWords[w] {
			continue
		}
		out = append(out, stem(w))
		if i+1 < len(ws) && !stopWords[ws[i+1]] {
			if c := stem(w + ws[i+1]); ix.has(c) || synonyms[c] != nil {
				out = append(out, c)
			}
		}
	}
	return dedupe(out)
}

// has reports whether some tool has the term.
func (ix *Index) has(term string) bool {
	return len(ix.postings[term]) > 0 || len(ix.srvTerms[term]) > 0
}

type match struct {
	term   string
	weight float64
}

// expand is what a query term matches: itself if some tool has it, else
// the terms one edit away (two for long words); its synonyms; and the name
// terms that start or end with it.
func (ix *Index) expand(qt string) []match {
	var out []match
	if ix.has(qt) {
		out = append(out, match{qt, 1})
	} else if len(qt) >= 4 {
		maxEdits := 1
		if len(qt) >= 8 {
			maxEdits = 2
		}
		for l := len(qt) - maxEdits; l <= len(qt)+maxEdits; l++ {
			for _, t := range ix.byLen[l] {
				switch d := EditDistance(qt, t, maxEdits); {
				case d > maxEdits:
				case d == 1:
					out = append(out, match{t, typoWeight1})
				case d == 2:
					out = append(out, match{t, typoWeight2})
				}
			}
		}
	}
	for _, t := range synonyms[qt] {
		if ix.has(t) {
			out = append(out, match{t, synonymWeight})
		}
	}
	if len(qt) >= minAffixWord {
		for _, t := range ix.nameVoc {
			if len(t) > len(qt)+2 && (strings.HasPrefix(t, qt) || strings.HasSuffix(t, qt)) {
				out = append(out, match{t, affixWeight})
			}
		}
	}
	return out
}

func dedupe(ts []string) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// WithinWords reports whether a query is within MaxWords distinct words.
// It stops counting there: a query of megabytes costs one pass.
func WithinWords(query string) bool {
	seen := make(map[string]bool)
	for _, w := range words(query, false) {
		if !seen[w] {
			if len(seen) == MaxWords {
				return false
			}
			seen[w] = true
		}
	}
	return true
}

// Count is how many tools the index holds, of server if it is not "",
// that visible reports true of (all when nil).
func (ix *Index) Count(server string, visible func(name string) bool) int {
	if visible == nil {
		if server == "" {
			return len(ix.docs)
		}
		if s := ix.servers[server]; s != nil {
			return len(s.tools)
		}
		return 0
	}
	n := 0
	for _, d := range ix.docs {
		if (server == "" || d.server == server) && visible(d.found.Name) {
			n++
		}
	}
	return n
}

// Servers names the servers with a tool visible reports true of (all
// when nil), sorted.
func (ix *Index) Servers(visible func(name string) bool) []string {
	if visible == nil {
		return slices.Clone(ix.names)
	}
	var names []string
	for _, s := range ix.names {
		if ix.Count(s, visible) > 0 {
			names = append(names, s)
		}
	}
	return names
}

// Def is the definition the tool of this front name was indexed from.
func (ix *Index) Def(name string) (json.RawMessage, bool) {
	i, ok := ix.byName[name]
	if !ok {
		return nil, false
	}
	return ix.docs[i].def, true
}

// firstLine is a description's first line, at most 160 bytes: what a Hit
// says of its tool.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	const max = 160
	if len(s) > max {
		s = wire.Truncate(s, max-3, "...")
	}
	return s
}

// sortedKeys is m's keys, sorted; sized once (slices.Sorted of
// maps.Keys grows its slice: 4x the bytes on a large vocabulary).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
