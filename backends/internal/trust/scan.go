package trust

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-gateway/mcp-gateway/config/safetext"
	"golang.org/x/text/unicode/norm"
)

// The scanner looks for what tool poisoning puts in a definition: text
// meant for the model and hidden from the user. A hit is reported (status,
// the log, the dashboard, tools --changes); under trust: approve, the
// definition waits for a person anyway. The rules are tuned against the
// definitions of real servers (testdata in gateway/testdata/toolsets: none
// is a hit) and a corpus of poisoned ones (testdata/poisoned: each is).
// docs/trust.md lists what each rule matches and why.

// Finding is one hit of the scanner.
type Finding struct {
	Rule    string `json:"rule"`    // the rule's name (Rules)
	Where   string `json:"where"`   // the member it was found in: description, inputSchema.properties.x.description, ...
	Excerpt string `json:"excerpt"` // the text around it, invisible characters written as \u{...}
}

func (f Finding) String() string { return fmt.Sprintf("%s in %s: %q", f.Rule, f.Where, f.Excerpt) }

// The rules' names.
const (
	RuleHiddenTag      = "hidden-instructions"   // <IMPORTANT>, <system>, [INST], <!-- -->, special tokens
	RuleOverride       = "override-instructions" // "ignore previous instructions", "you are now"
	RuleConceal        = "conceal-from-user"     // "do not tell the user", "without informing the user"
	RuleSensitiveFile  = "sensitive-file"        // ~/.ssh, id_rsa, .aws/credentials, mcp.json, ...
	RuleSecretRequest  = "secret-request"        // "pass the API key", "include the contents of .env"
	RuleExfiltrateURL  = "send-to-url"           // "send ... to https://..."
	RuleInvisible      = "invisible-characters"  // zero-width, format and bidi characters, tags, variation selectors, blank letters, control characters
	RuleHiddenPadding  = "hidden-padding"        // long runs of blank lines or spaces (or of no-break and other wide spaces) that push text out of view
	RuleLongDescriptor = "long-description"      // a description longer than MaxDescription
)

// MaxDescription is the longest description that is not a hit by its
// length alone; the longest of the real servers' is 6,549 characters.
const MaxDescription = 10000

var (
	hiddenTag = regexp.MustCompile(`(?i)<\s*/?\s*(important|system|system[-_ ]?prompt|instructions?|secret|hidden|admin|critical|assistant|sys|context|note[-_ ]to[-_ ](the[-_ ])?(ai|assistant|model|llm))\s*>|\[/?(INST|SYSTEM|SYS)\]|<\|(im_start|im_end|system|endoftext|eot_id|start_header_id)\|>|<<\s*/?\s*SYS\s*>>|<!--`)
	override  = regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+)?(previous|prior|above|earlier|preceding|other|system|original)\s+(instructions|rules|directions|prompts?|guidelines|messages)|\byou\s+are\s+now\s+(a|an|in)\b|\bnew\s+(system\s+)?instructions\s*:|\bfrom\s+now\s+on,?\s+(you|always|never)\b`)
	conceal   = regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never|must\s+not)\s+(tell|inform|mention|reveal|show|notify|alert|warn|disclose)(\s+(this|it|anything|that))?\s+(to\s+)?(the\s+)?user|\bwithout\s+(telling|informing|notifying|alerting|asking|warning)\s+the\s+user|\buser\s+(must|should|need|needs)\s+(not|never)\s+(know|see|notice|be\s+told)|\b(hide|conceal)\s+(this|it)\s+from\s+the\s+user|\b(silently|secretly|quietly|covertly)\s+(send|read|copy|upload|forward|include|pass|append|add|call|exfiltrate|collect)`)
	sensitive = regexp.MustCompile(`(?i)~?/?\.ssh(/|\b)|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/(credentials|config)|/etc/(passwd|shadow|sudoers)|\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.docker/config\.json|\.kube/config|\.gnupg\b|\b(mcp|claude_desktop_config)\.json\b|\.config/gh/hosts|\.(bash|zsh)_history\b|\bwallet\.dat\b|\blogin\.keychain|\.password-store\b`)
	secretReq = regexp.MustCompile(`(?i)\b(send|pass|include|provide|upload|forward|share|attach|append|post|leak|exfiltrate|read|copy|put|add|collect|extract|dump)\b[^.!?\n]{0,60}?(\b(api[ _-]?keys?|passwords?|passphrases?|credentials|secrets?|private[ _-]?keys?|(github|gitlab|slack|npm|openai|aws|api|access|auth(entication)?|bearer|session|personal[ _-]access|refresh|oauth|id)[ _-]?tokens?|ssh[ _-]?keys?|(session|auth)[ _-]?cookies?|environment\s+variables|env\s+vars)\b|\.env\b)`)
	negation  = regexp.MustCompile(`(?i)\b(not|never|avoid|without|no)\b|n't\b`)
	sendToURL = regexp.MustCompile(`(?i)\b(send|post|upload|forward|transmit|exfiltrate|report|submit|leak)\b[^.!?\n]{0,80}?\bto\s+(https?://|wss?://|ftp://)`)
	// Blank lines and runs of spaces, of any space separator (\p{Zs}:
	// no-break, em, ideographic spaces, …); a no-break space does not
	// wrap, so 16 of them in a row (never typography) push text aside.
	padding = regexp.MustCompile(`\n[\t\r\p{Zs}]*(\n[\t\r\p{Zs}]*){9,}|[\t\p{Zs}]{300,}|[\x{a0}\x{1680}\x{2000}-\x{200a}\x{202f}\x{205f}\x{3000}]{16,}`)
)

// Scan checks a tool's or prompt's definition (as the backend listed it)
// and returns its hits, at most one per rule and member, in a stable
// order: the members its digest covers but the name, and _meta, which a
// client may hand the model too — their strings and the names of their
// objects' members (a schema's property names are text a model reads);
// the name for invisible characters. A definition that does not decode
// has none: it is listed as the backend wrote it, and the client judges
// it.
func Scan(kind Kind, raw json.RawMessage) []Finding {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	var out []Finding
	seen := map[[2]string]bool{}
	add := func(rule, where, excerpt string) {
		if k := [2]string{rule, where}; !seen[k] {
			seen[k] = true
			out = append(out, Finding{Rule: rule, Where: where, Excerpt: excerpt})
		}
	}
	for _, m := range append(members[kind][:len(members[kind]):len(members[kind])], "_meta") {
		v, ok := obj[m]
		if !ok || m == "name" {
			continue
		}
		walkStrings(v, m, func(where, s string, regex bool) {
			if regex { // no prose: only what hides in it
				if i := invisibleAt(s, false); i >= 0 {
					add(RuleInvisible, where, excerpt(s, i, i))
				}
				return
			}
			scanText(where, s, add)
			if where == "description" && utf8.RuneCountInString(s) > MaxDescription {
				add(RuleLongDescriptor, where, fmt.Sprintf("%d characters", utf8.RuneCountInString(s)))
			}
		})
	}
	if name, ok := obj["name"].(string); ok {
		if i := invisibleAt(name, false); i >= 0 {
			add(RuleInvisible, "name", excerpt(name, i, i))
		}
	}
	return out
}

// walkStrings calls fn with each string value under v and where it is:
// schemas' descriptions, titles, defaults and examples, enum values, ...,
// and a pattern's regular expression (regex: no prose, its words would be
// false alarms; a property named pattern is a schema like any other);
// and with each object's member names, where "WHERE.NAME (name)".
func walkStrings(v any, where string, fn func(where, s string, regex bool)) {
	switch x := v.(type) {
	case string:
		fn(where, x, false)
	case []any:
		for i, e := range x {
			walkStrings(e, fmt.Sprintf("%s[%d]", where, i), fn)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fn(where+"."+k+" (name)", k, false)
			if re, ok := x[k].(string); ok && k == "pattern" {
				fn(where+"."+k, re, true)
				continue
			}
			walkStrings(x[k], where+"."+k, fn)
		}
	}
}

// scanText applies the text rules to one string, and again to its NFKC
// form when that differs: ＜ＩＭＰＯＲＴＡＮＴ＞ (full-width) and 𝐢𝐠𝐧𝐨𝐫𝐞
// (mathematical letters) read to a model as the words they resemble.
func scanText(where, s string, add func(rule, where, excerpt string)) {
	if i := invisibleAt(s, true); i >= 0 {
		add(RuleInvisible, where, excerpt(s, i, i))
	}
	matchText(where, s, add)
	if !norm.NFKC.IsNormalString(s) {
		matchText(where, norm.NFKC.String(s), add)
	}
}

// matchText applies the rules of words and layout to s.
func matchText(where, s string, add func(rule, where, excerpt string)) {
	for _, r := range []struct {
		name string
		re   *regexp.Regexp
	}{
		{RuleHiddenTag, hiddenTag},
		{RuleOverride, override},
		{RuleConceal, conceal},
		{RuleSensitiveFile, sensitive},
		{RuleExfiltrateURL, sendToURL},
		{RuleHiddenPadding, padding},
	} {
		if loc := r.re.FindStringIndex(s); loc != nil {
			add(r.name, where, excerpt(s, loc[0], loc[1]))
		}
	}
	for _, loc := range secretReq.FindAllStringIndex(s, -1) {
		// "Do not include API keys" is advice, not a request: a negation
		// earlier in the same sentence clears it.
		if !negation.MatchString(sentenceBefore(s, loc[0])) {
			add(RuleSecretRequest, where, excerpt(s, loc[0], loc[1]))
			break
		}
	}
}

// sentenceBefore is the part of s's sentence before i.
func sentenceBefore(s string, i int) string {
	start := strings.LastIndexAny(s[:i], ".!?\n")
	return s[start+1 : i]
}

// invisibleAt returns the index of the first character in s that a person
// does not see but a model reads (safetext.Invisible), or -1 — but for an
// emoji's presentation selector: one U+FE0E or U+FE0F after a character
// that is neither a letter of ASCII, a space nor another selector, with
// no selector after it ("⚠️", "1️⃣"); and in text (not a name, which
// would look like the name without it) for a joiner that writing needs
// (joins). A run of selectors, or one after a letter, carries hidden bytes.
func invisibleAt(s string, text bool) int {
	prev := rune(-1)
	for i, r := range s {
		if text && (r == 0x200c || r == 0x200d) {
			if next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):]); joins(r, prev, next) {
				prev = r
				continue
			}
		}
		if safetext.Invisible(r) && !(r == 0xfe0e || r == 0xfe0f) {
			return i
		}
		if r == 0xfe0e || r == 0xfe0f {
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			if prev < 0 || prev < 0x80 && unicode.IsLetter(prev) || unicode.IsSpace(prev) || safetext.IsVariationSelector(prev) ||
				safetext.IsVariationSelector(next) {
				return i
			}
		}
		prev = r
	}
	return -1
}

// joins reports whether the zero-width joiner or non-joiner j between
// prev and next is one that ordinary text holds: one of either between two
// letters (or marks) of a script beyond ASCII — Persian writes می‌خواهم
// with a non-joiner, Hindi क्‍ष with a joiner — or a joiner between
// pictographs, which makes one emoji of them (👨‍👩‍👧, 🏳️‍🌈). A run of
// them, or one beside ASCII, still is a hit: zero-width smuggling spells
// its bits in runs, and in ASCII text a joiner joins nothing.
func joins(j, prev, next rune) bool {
	script := func(r rune) bool { return r >= 0x80 && (unicode.IsLetter(r) || unicode.IsMark(r)) }
	pictograph := func(r rune) bool { return r >= 0x80 && unicode.Is(unicode.So, r) }
	if script(prev) && script(next) {
		return true
	}
	// After a pictograph, its skin tone (U+1F3FB–1F3FF) or its presentation selector.
	return j == 0x200d && pictograph(next) && (pictograph(prev) || prev >= 0x1f3fb && prev <= 0x1f3ff || prev == 0xfe0f)
}

// excerpt is the text of s around [i, j): up to 40 characters either
// side, within 160 in all, with invisible characters made visible.
func excerpt(s string, i, j int) string {
	const ctx, most = 40, 160
	start, end := i, j
	for n := 0; n < ctx && start > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(s[:start])
		start -= size
	}
	for n := 0; n < ctx && end < len(s); n++ {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	n := 0
	for _, r := range s[start:end] {
		if n == most {
			b.WriteString("…")
			return b.String()
		}
		n++
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case safetext.Invisible(r):
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	if end < len(s) {
		b.WriteString("…")
	}
	return b.String()
}
