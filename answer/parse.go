package answer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
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
	Content []wirePart  `json:"content"`
	Action  *wireAction `json:"action"`
}

type wirePart struct {
	Type        string           `json:"type"`
	Text        string           `json:"text"`
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

// wireDateField holds the date fields a citation or source may carry.
type wireDateField struct {
	PublishedAt     string `json:"published_at"`
	PublishedDate   string `json:"published_date"`
	PublicationDate string `json:"publication_date"`
	Date            string `json:"date"`
}

// date returns the first parseable date field as YYYY-MM-DD, or "".
func (d wireDateField) date() string {
	for _, v := range []string{d.PublishedAt, d.PublishedDate, d.PublicationDate, d.Date} {
		if s := normalizeDate(v); s != "" {
			return s
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

// parseResponse builds the Result from the raw response body. now gives the
// access date for citations without a date of their own; maxCitations caps
// the citation list (source IDs are kept first when it applies); fallbackModel
// is used when the response names no model.
func parseResponse(raw []byte, now time.Time, maxCitations int, fallbackModel string) (*Result, error) {
	var wr wireResponse
	if err := json.Unmarshal(raw, &wr); err != nil {
		return nil, fmt.Errorf("decode response output: %w", err)
	}
	accessed := tokyoDate(now)

	var text strings.Builder
	var urlCits []Citation
	urlIndex := map[string]int{}
	usedSearch := false
	var sources []Citation
	for _, it := range wr.Output {
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				if p.Type != "output_text" {
					continue
				}
				text.WriteString(p.Text)
				for _, a := range p.Annotations {
					if a.Type != "url_citation" {
						continue
					}
					usedSearch = true
					u := strings.TrimSpace(a.URL)
					if u == "" {
						continue
					}
					if i, dup := urlIndex[u]; dup {
						if urlCits[i].Title == "" {
							urlCits[i].Title = a.Title
						}
						continue
					}
					date := a.date()
					if date == "" {
						date = accessed
					}
					urlIndex[u] = len(urlCits)
					urlCits = append(urlCits, Citation{URL: u, Title: a.Title, PublishedAt: date})
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
	if u := strings.TrimSpace(src.URL); u != "" {
		return Citation{URL: u, Title: strings.TrimSpace(src.Title), PublishedAt: date}, true
	}
	id := strings.TrimSpace(src.Name)
	if id == "" {
		id = strings.TrimSpace(src.ID)
	}
	if id == "" {
		return Citation{}, false
	}
	return Citation{URL: id, Title: src.Type, PublishedAt: date}, true
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
		if m == nil {
			continue
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
