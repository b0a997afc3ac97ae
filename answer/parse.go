package answer

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-gateway/mcp-gateway/config/safetext"
)

// The Responses output is read from the raw JSON of the response rather than
// from openai-go's typed unions: openai-go keeps a non-URL search source
// ({"type":"api","name":"oai-weather"}) only in RawJSON, and a source's own
// date, when an API version sends one, has no typed field at all.

type wireResponse struct {
	Model  string     `json:"model"`
	Status string     `json:"status"`
	Output []wireItem `json:"output"`
}

type wireItem struct {
	Type    string      `json:"type"`
	Phase   string      `json:"phase"` // a message's: commentary | final_answer (newer models)
	Content []wirePart  `json:"content"`
	Action  *wireAction `json:"action"`
}

type wirePart struct {
	Type        string           `json:"type"`
	Text        string           `json:"text"`
	Refusal     string           `json:"refusal"`
	Annotations []wireAnnotation `json:"annotations"`
}

type wireAnnotation struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
	wireDateField
}

type wireAction struct {
	Type    string       `json:"type"`
	Sources []wireSource `json:"sources"`
}

type wireSource struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Name  string `json:"name"`
	ID    string `json:"id"`
	Title string `json:"title"`
	wireDateField
}

// wireDateField holds the date fields a citation or source may carry. No
// API version documents them, so they are read leniently: a string or a
// Unix time in seconds; anything else is no date, never a failed answer.
type wireDateField struct {
	PublishedAt     json.RawMessage `json:"published_at"`
	PublishedDate   json.RawMessage `json:"published_date"`
	PublicationDate json.RawMessage `json:"publication_date"`
	Date            json.RawMessage `json:"date"`
}

// date returns the first parseable date field as YYYY-MM-DD, or "".
func (d wireDateField) date() string {
	for _, raw := range []json.RawMessage{d.PublishedAt, d.PublishedDate, d.PublicationDate, d.Date} {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if s = normalizeDate(s); s != "" {
				return s
			}
		} else if sec, err := strconv.ParseInt(string(raw), 10, 64); err == nil && sec > 0 && sec < 1e11 {
			return tokyoDate(time.Unix(sec, 0))
		}
	}
	return ""
}

var isoDatePrefix = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)

// normalizeDate turns a date or timestamp into YYYY-MM-DD ("" when it cannot).
// A bare date or the date part of an ISO timestamp is taken as written.
func normalizeDate(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if m := isoDatePrefix.FindString(v); m != "" {
		if _, err := time.Parse(time.DateOnly, m); err == nil {
			return m
		}
	}
	for _, layout := range []string{time.RFC1123Z, time.RFC1123, time.RFC850, time.ANSIC, "January 2, 2006", "Jan 2, 2006", "2 January 2006"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.Format(time.DateOnly)
		}
	}
	return ""
}

// errNoAnswer is a response without answer text: no output_text, and no
// refusal either.
var errNoAnswer = errors.New("the response holds no answer text")

// parseResponse builds the Result from the raw response body. now gives the
// access date for citations without a date of their own; maxCitations caps
// the citation list (source IDs are kept first when it applies); fallbackModel
// is used when the response names no model.
//
// The answer is the text of the message items' output_text parts, joined as
// openai-go's Response.OutputText joins them; a message in the commentary
// phase (a preamble such as "I'll look that up") is left out when a final
// answer is there. A response whose only text is a refusal answers with the
// refusal; one with neither is errNoAnswer.
func parseResponse(raw []byte, now time.Time, maxCitations int, fallbackModel string) (*Result, error) {
	var wr wireResponse
	if err := json.Unmarshal(raw, &wr); err != nil {
		return nil, fmt.Errorf("decode response output: %w", err)
	}
	accessed := tokyoDate(now)
	final := false
	for _, it := range wr.Output {
		final = final || it.Type == "message" && it.Phase == "final_answer"
	}

	var text strings.Builder
	var refusals []string
	var urlCits []Citation
	urlIndex := map[string]int{}
	usedSearch := false
	var sources []Citation
	for _, it := range wr.Output {
		switch it.Type {
		case "message":
			if final && it.Phase == "commentary" {
				continue
			}
			for _, p := range it.Content {
				if p.Type == "refusal" && strings.TrimSpace(p.Refusal) != "" {
					refusals = append(refusals, strings.TrimSpace(p.Refusal))
				}
				if p.Type != "output_text" {
					continue
				}
				text.WriteString(p.Text)
				for _, a := range p.Annotations {
					if a.Type != "url_citation" {
						continue
					}
					usedSearch = true
					u, ok := webURL(a.URL)
					if !ok {
						continue
					}
					title := safetext.Strip(a.Title, false)
					if i, dup := urlIndex[u]; dup {
						if urlCits[i].Title == "" {
							urlCits[i].Title = title
						}
						continue
					}
					date := a.date()
					if date == "" {
						date = accessed
					}
					urlIndex[u] = len(urlCits)
					urlCits = append(urlCits, Citation{URL: u, Title: title, PublishedAt: date})
				}
			}
		case "web_search_call":
			usedSearch = true
			if it.Action == nil {
				continue
			}
			for _, src := range it.Action.Sources {
				if c, ok := sourceCitation(src, accessed); ok {
					sources = append(sources, c)
				}
			}
		}
	}

	citations := make([]Citation, 0, len(urlCits)+len(sources))
	citations = append(citations, urlCits...)
	seen := map[string]bool{}
	for _, c := range urlCits {
		seen[c.URL] = true
	}
	for _, c := range sources {
		// With url_citation annotations present, URL sources add nothing the
		// model chose to cite; source IDs still say where the answer came from.
		if len(urlCits) > 0 && isURL(c.URL) {
			continue
		}
		if seen[c.URL] {
			continue
		}
		seen[c.URL] = true
		citations = append(citations, c)
	}
	citations = capCitations(citations, maxCitations)

	model := wr.Model
	if model == "" {
		model = fallbackModel
	}
	answer := text.String()
	if strings.TrimSpace(answer) == "" {
		if len(refusals) == 0 {
			return nil, errNoAnswer
		}
		answer = strings.Join(refusals, "\n\n")
	}
	if usedSearch && len(citations) > 0 {
		answer = withSources(answer, citations)
	}
	return &Result{Answer: answer, UsedSearch: usedSearch, Citations: citations, Model: model}, nil
}

// sourceCitation turns a web_search_call source into a citation: a URL
// source by its URL, anything else by its identifier (name, else id) with
// its type as the title ({"type":"api","name":"oai-weather"} →
// {url:"oai-weather", title:"api"}).
func sourceCitation(src wireSource, accessed string) (Citation, bool) {
	date := src.date()
	if date == "" {
		date = accessed
	}
	if strings.TrimSpace(src.URL) != "" {
		u, ok := webURL(src.URL)
		return Citation{URL: u, Title: strings.TrimSpace(safetext.Strip(src.Title, false)), PublishedAt: date}, ok
	}
	id := strings.TrimSpace(src.Name)
	if id == "" {
		id = strings.TrimSpace(src.ID)
	}
	// An identifier is one word: no URL, nothing to forge a line with.
	if id == "" || isURL(id) || !oneWord(id) {
		return Citation{}, false
	}
	return Citation{URL: id, Title: safetext.Strip(src.Type, false), PublishedAt: date}, true
}

// webURL returns s, trimmed, when it is an http or https URL with a host
// and no white space or control character (a citation is written on a line
// of its own); anything else (javascript:, a relative path) is no citation.
func webURL(s string) (string, bool) {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || !oneWord(s) {
		return "", false
	}
	return s, true
}

// oneWord reports whether s holds no white space and nothing that
// safetext.Strip would remove: it cannot break or forge a line it is
// written on.
func oneWord(s string) bool {
	return !strings.ContainsFunc(s, unicode.IsSpace) && safetext.Strip(s, false) == s
}

// isURL reports whether s looks like an absolute URL rather than a source ID.
func isURL(s string) bool {
	return strings.Contains(s, "://")
}

// capCitations keeps at most n citations (n <= 0 means no cap). Source IDs
// are kept first, since they are often the only trace of where an answer came
// from (a weather feed, say); URLs fill the remaining places in order. The
// result keeps the original order.
func capCitations(cs []Citation, n int) []Citation {
	if n <= 0 || len(cs) <= n {
		return cs
	}
	keep := make([]bool, len(cs))
	left := n
	for i, c := range cs {
		if left > 0 && !isURL(c.URL) {
			keep[i] = true
			left--
		}
	}
	for i := range cs {
		if left > 0 && !keep[i] {
			keep[i] = true
			left--
		}
	}
	out := make([]Citation, 0, n)
	for i, c := range cs {
		if keep[i] {
			out = append(out, c)
		}
	}
	return out
}

// sourcesHeader matches a line that heads a sources list: "Sources:",
// "**Sources:**", "## Sources", "Source: https://..." (case-insensitive).
// Group 1 is whatever follows the colon on the same line.
var sourcesHeader = regexp.MustCompile(`(?i)^\s*(?:#{1,6}\s*)?[*_]{0,2}\s*sources?\s*[*_]{0,2}\s*(?:[:：]\s*[*_]{0,2}\s*(.*))?$`)

var anyDate = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)

// listLine matches a line that can belong to a sources list.
var listLine = regexp.MustCompile(`^\s*(?:[-*•+]|\d+[.)]|\[\d+\]|https?://)`)

// withSources makes sure answer ends with a dated Sources list. If the model
// already ended it with a Sources list that carries dates, the answer is
// returned unchanged; if it ended with an undated one, that list is replaced;
// otherwise the server's list is appended. There is never a second list.
func withSources(answer string, cs []Citation) string {
	lines := strings.Split(answer, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		m := sourcesHeader.FindStringSubmatch(lines[i])
		if m == nil || m[1] != "" && !listLine.MatchString(m[1]) && !anyDate.MatchString(m[1]) {
			continue // no header: a sentence ("Source: the ministry, which ...")
		}
		dated, listOnly := anyDate.MatchString(m[1]), true
		for _, l := range lines[i+1:] {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if anyDate.MatchString(l) {
				dated = true
			}
			if !listLine.MatchString(l) {
				listOnly = false
			}
		}
		if dated {
			return answer
		}
		if listOnly {
			answer = strings.Join(lines[:i], "\n")
		}
		break
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(answer, " \t\r\n"))
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString("Sources:")
	for _, c := range cs {
		fmt.Fprintf(&b, "\n- %s (%s)", c.URL, c.PublishedAt)
	}
	return b.String()
}
