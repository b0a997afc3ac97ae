package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// args are the validated arguments of one call.
type args struct {
	Query       string
	RecencyDays int
	MaxResults  int
	Domains     []string
	Keys        []string // the argument names received, sorted, for the debug log
}

// parseArgs validates the raw tools/call arguments of tool. Search hints the
// call does not give come from defaults; answer_quick takes only query, so
// for it any other argument is ignored and the defaults always apply.
func parseArgs(tool string, raw json.RawMessage, defaults config.SearchDefaults) (*args, error) {
	a := &args{
		RecencyDays: defaults.RecencyDays,
		MaxResults:  defaults.MaxResults,
		Domains:     cleanDomains(defaults.Domains),
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, &ArgumentError{Reason: "query is required"}
	}
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, &ArgumentError{Reason: "arguments must be a JSON object"}
	}
	for k := range m {
		a.Keys = append(a.Keys, k)
	}
	sort.Strings(a.Keys)

	q, ok := m["query"]
	if !ok || isNull(q) {
		return nil, &ArgumentError{Reason: "query is required"}
	}
	if err := json.Unmarshal(q, &a.Query); err != nil {
		return nil, &ArgumentError{Reason: "query must be a string"}
	}
	if strings.TrimSpace(a.Query) == "" {
		return nil, &ArgumentError{Reason: "query is required"}
	}
	if tool == config.ProfileAnswerQuick {
		return a, nil
	}
	if v, ok := m["recency_days"]; ok && !isNull(v) {
		n, err := count("recency_days", v)
		if err != nil {
			return nil, err
		}
		a.RecencyDays = n
	}
	if v, ok := m["max_results"]; ok && !isNull(v) {
		n, err := count("max_results", v)
		if err != nil {
			return nil, err
		}
		a.MaxResults = n
	}
	if v, ok := m["domains"]; ok && !isNull(v) {
		var ds []string
		if err := json.Unmarshal(v, &ds); err != nil {
			return nil, &ArgumentError{Reason: "domains must be an array of strings"}
		}
		if a.Domains = cleanDomains(ds); len(a.Domains) > maxDomains {
			return nil, &ArgumentError{Reason: fmt.Sprintf("domains holds %d domains; the search takes at most %d", len(a.Domains), maxDomains)}
		}
	}
	return a, nil
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// count decodes a non-negative whole number (30 and 30.0 are fine; "30",
// -1 and 2.5 are not).
func count(name string, v json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, &ArgumentError{Reason: name + " must be a number"}
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, &ArgumentError{Reason: name + " must be a non-negative whole number"}
	}
	return int(f), nil
}

// maxDomains is the most domains web_search's filter takes.
const maxDomains = 100

// cleanDomains makes each domain a bare host, as web_search's filter wants
// it ("https://Go.dev/doc" is go.dev), and drops empty ones and duplicates.
// It never returns a slice aliasing its argument.
func cleanDomains(ds []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range ds {
		d = strings.ToLower(strings.TrimSpace(d))
		if _, rest, ok := strings.Cut(d, "://"); ok {
			d = rest
		}
		if i := strings.IndexAny(d, "/?#"); i >= 0 {
			d = d[:i]
		}
		if i := strings.LastIndexByte(d, '@'); i >= 0 {
			d = d[i+1:] // a user
		}
		if host, _, err := net.SplitHostPort(d); err == nil {
			d = host // a port
		}
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

// inputText is the Responses `input`: the query, then the hints line.
func inputText(a *args) string {
	var b strings.Builder
	b.WriteString(a.Query)
	b.WriteString("\n[Hints] recency_days=")
	b.WriteString(strconv.Itoa(a.RecencyDays))
	b.WriteString(", max_results=")
	b.WriteString(strconv.Itoa(a.MaxResults))
	b.WriteString(".")
	if len(a.Domains) > 0 {
		b.WriteString(" domains: ")
		b.WriteString(strings.Join(a.Domains, ", "))
	}
	return b.String()
}

// supportsVerbosity reports whether model takes text.verbosity (gpt-5*).
func supportsVerbosity(model string) bool {
	return strings.HasPrefix(strings.ToLower(model), "gpt-5")
}

// supportsReasoning reports whether model takes reasoning.effort (gpt-5*,
// o3*, o4*).
func supportsReasoning(model string) bool {
	m := strings.ToLower(model)
	return strings.HasPrefix(m, "gpt-5") || strings.HasPrefix(m, "o3") || strings.HasPrefix(m, "o4")
}

// buildParams assembles the Responses request for one call.
func buildParams(p config.Profile, instructions string, a *args) responses.ResponseNewParams {
	ws := responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}
	if len(a.Domains) > 0 {
		ws.Filters.AllowedDomains = append([]string(nil), a.Domains...)
	}
	params := responses.ResponseNewParams{
		Model:   shared.ResponsesModel(p.Model),
		Input:   responses.ResponseNewParamsInputUnion{OfString: param.NewOpt(inputText(a))},
		Tools:   []responses.ToolUnionParam{{OfWebSearch: &ws}},
		Include: []responses.ResponseIncludable{responses.ResponseIncludableWebSearchCallActionSources},
	}
	if instructions != "" {
		params.Instructions = param.NewOpt(instructions)
	}
	if p.Verbosity != "" && supportsVerbosity(p.Model) {
		params.Text.Verbosity = responses.ResponseTextConfigVerbosity(p.Verbosity)
	}
	if p.ReasoningEffort != "" && supportsReasoning(p.Model) {
		params.Reasoning.Effort = shared.ReasoningEffort(p.ReasoningEffort)
	}
	return params
}

// summary describes params for the debug log without the query or the
// instructions' text.
func summary(params responses.ResponseNewParams, from string, a *args) string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	return fmt.Sprintf("request summary tools=web_search(on) reasoning=%s text.verbosity=%s include=web_search_call.action.sources instructions=%s instructionsLen=%d inputLen=%d recency_days=%d max_results=%d domains=%d",
		onOff(params.Reasoning.Effort != ""), onOff(params.Text.Verbosity != ""), from,
		len(params.Instructions.Value), len(params.Input.OfString.Value), a.RecencyDays, a.MaxResults, len(a.Domains))
}
