package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The text analysis of the search (index.go): a tool's text and
// a query become the same terms — words split at anything not a letter or
// digit and at camelCase humps, lower-cased, stop words dropped, and stemmed
// with a light English stemmer, so that "creating a branch" meets
// create_branch and "searches" meets "search".

// terms appends the terms of text to dst. An identifier (a tool's or
// parameter's name) keeps its stop words, since its words are few and
// chosen, and is split at camelCase humps (getFileInfo); prose (a
// description, a query) is not, so that "GitHub" is github there, as in
// a model's query, not git and hub.
func terms(dst []string, text string, ident bool) []string {
	for _, w := range words(text, ident) {
		if !ident && stopWords[w] {
			continue
		}
		dst = append(dst, stem(w))
	}
	return dst
}

// words splits text into lower-case words: runs of letters and digits
// (base64, context7), and with humps also where a lower-case letter is
// followed by an upper-case one (useEffect). Words of one letter or digit
// are dropped: they carry nothing a search can use.
func words(text string, humps bool) []string {
	var out []string
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && utf8.RuneCountInString(text[start:end]) > 1 {
			out = append(out, strings.ToLower(text[start:end]))
		}
		start = -1
	}
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !word:
			flush(i)
		case start >= 0 && humps && unicode.IsLower(prev) && unicode.IsUpper(r):
			flush(i)
			start = i
		case start < 0:
			start = i
		}
		prev = r
	}
	flush(len(text))
	return out
}

// withoutURLs is a query without the URLs in it: a model names the page
// it means to open, and "https", "www" or "com" say nothing about the tool
// that opens it.
func withoutURLs(query string) string {
	if !strings.Contains(query, "://") && !strings.Contains(query, "www.") {
		return query
	}
	fields := strings.Fields(query)
	out := fields[:0]
	for _, f := range fields {
		if !strings.Contains(f, "://") && !strings.HasPrefix(f, "www.") {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// stopWords are words a query holds for grammar, not meaning. Words that
// name what a tool does ("get", "list", "open", "back", "new") are not
// among them, even the common ones: their weight comes from how many tools
// have them.
var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`a an the and or but if then than so as of to in on at by for with from into onto
		about via per is are was were be been being am do does did doing done have has had having
		i me my mine myself we us our ours you your yours he him his she her it its they them their theirs
		this that these those there here what which who whom whose when where why how
		can could would should will shall may might must let lets please want wants need needs like
		just also very too some any such own same other else something anything someone everything everyone whatever
		not no nor only really actually currently`) {
		m[w] = true
	}
	return m
}()

// stem reduces an English word to a stem shared by its inflections:
// plurals (-s, -es, -ies), -ing, -ed, -ly, -ship and -ation, then a final y
// becomes i, a final e goes, and a final doubled consonant other than l, s
// or z is undoubled (running → run, stopped → stop, files → fil). It is a
// light cousin of Porter's first step: both sides of a search go through
// it, so a stem only has to be the same for the forms of a word, not a
// word itself. Words of digits, and of three letters or fewer, stay as
// they are.
func stem(w string) string {
	if len(w) <= 2 || !isLetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	for _, suf := range [...]string{"ing", "ed"} {
		if s, ok := strings.CutSuffix(w, suf); ok && len(s) >= 2 && hasVowel(s) {
			w = s
			break
		}
	}
	if s, ok := strings.CutSuffix(w, "ly"); ok && len(s) >= 5 {
		w = s // recursively → recursive; not reply, apply
	}
	if s, ok := strings.CutSuffix(w, "ship"); ok && len(s) >= 4 {
		w = s // relationship → relation, ownership → owner
	}
	if s, ok := strings.CutSuffix(w, "ation"); ok && len(s) >= 2 {
		w = s + "ate" // creation → create, relation → relate
	}
	if n := len(w); n > 3 && w[n-1] == 'y' && hasVowel(w[:n-1]) {
		w = w[:n-1] + "i"
	}
	if n := len(w); n > 2 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	if n := len(w); n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

func isLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// EditDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions and transpositions of neighbours),
// or max+1 when it is more than max. It works on bytes: terms are
// lower-case ASCII in the common case, and a non-ASCII letter costs at most
// one edit more.
func EditDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	// Three rows: the transposition looks two back. Terms are short:
	// their rows fit on the stack.
	var buf [3 * 32]int
	rows := buf[:]
	if n := 3 * (len(b) + 1); n > len(buf) {
		rows = make([]int, n)
	}
	prev2, prev, cur := rows[:len(b)+1], rows[len(b)+1:2*(len(b)+1)], rows[2*(len(b)+1):3*(len(b)+1)]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			low = min(low, v)
		}
		if low > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], max+1)
}

// synonyms maps a term to the terms of words that mean the same in the
// language of tools, each group written once below: the verbs tools are
// named with, and the abbreviations a model writes for their objects. A
// query term matches its synonyms too, at synonymWeight (index.go).
var synonyms = func() map[string][]string {
	m := make(map[string][]string)
	for _, line := range strings.Split(`delete remove erase forget destroy discard
		create add make new insert open
		get fetch retrieve obtain
		list enumerate
		show display view
		find search lookup locate query
		several multiple many batch bulk
		update edit modify change patch alter
		send post publish
		run execute start launch invoke
		stop kill terminate cancel abort halt
		open navigate visit browse
		write save store persist record
		remember memory memorize recall
		close quit dismiss
		rename move
		directory folder dir
		page website webpage site
		image picture photo img pic
		chart graph plot diagram visualize visualization
		issue bug ticket
		repository repo
		organization org
		database db
		document doc documentation
		configuration config setting
		environment env
		information info detail
		message msg
		application app
		authentication auth login
		user person people
		pull_request pr
		javascript js
		terminal shell`, "\n") {
		var group [][]string // each word's terms (pull_request is two)
		for _, w := range strings.Fields(line) {
			group = append(group, terms(nil, w, true))
		}
		for i, from := range group {
			if len(from) != 1 {
				continue // a query term is one word
			}
			for j, to := range group {
				if i != j {
					m[from[0]] = append(m[from[0]], to...)
				}
			}
		}
	}
	return m
}()
