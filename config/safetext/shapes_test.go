package safetext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Planted secrets, one of each shape (none is real).
var planted = map[string]string{
	"private-key":       "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----",
	"aws-access-key":    "AKIAIOSFODNN7EXAMPLE",
	"aws-secret-key":    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"github-token":      "ghp_1234567890abcdefghijABCDEFGHIJ123456",
	"gitlab-token":      "glpat-aBcDeFgHiJkLmNoPqRsT12",
	"slack-token":       "xoxb-1234567890-0987654321-AbCdEfGhIjKl",
	"google-api-key":    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
	"api-key":           "sk-proj-AbCdEf1234567890GhIjKlMn",
	"jwt":               "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"authorization":     "Authorization: Bearer abc123def456ghi789jkl",
	"huggingface-token": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678",
}

// secretOf is the part of a planted value that must not survive.
func secretOf(kind, v string) string {
	switch kind {
	case "private-key":
		return "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
	case "aws-secret-key":
		return "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	case "authorization":
		return "abc123def456ghi789jkl"
	}
	return v
}

// TestMaskShapesInJSON: each planted secret, inside a tool result's text
// (JSON-escaped) and structuredContent, is masked; the result stays JSON
// and keeps everything else.
func TestMaskShapesInJSON(t *testing.T) {
	for kind, v := range planted {
		text, _ := json.Marshal("before " + v + " after")
		res := []byte(`{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":{"v":` + string(text) + `,"n":12345678901234567890123}}`)
		out, n := MaskShapes(res)
		if n != 2 {
			t.Errorf("%s: %d masked, want 2: %s", kind, n, out)
		}
		if bytes.Contains(out, []byte(secretOf(kind, v))) || !json.Valid(out) {
			t.Errorf("%s: not masked or not JSON: %s", kind, out)
		}
		if !bytes.Contains(out, []byte("[redacted:"+kind+"]")) || !bytes.Contains(out, []byte("before ")) ||
			!bytes.Contains(out, []byte(" after")) || !bytes.Contains(out, []byte("12345678901234567890123")) {
			t.Errorf("%s: too much masked: %s", kind, out)
		}
		again, m := MaskShapes(out)
		if m != 0 || !bytes.Equal(again, out) {
			t.Errorf("%s: masked again: %s", kind, again)
		}
	}
}

// TestMaskShapesAfterJSONEscapes: a planted secret right after a JSON
// escape — \n, \t, \r, \", \/, \u00XX (Go's "<", a control character,
// one beyond ASCII as an ASCII-only encoder writes it) — is masked in a
// result, in a log line and in audited arguments alike, also in JSON
// within a JSON string (a result's text that is JSON: "\\nghp_…"); after
// an escape that stands for a letter (\u0041) it is part of a word.
func TestMaskShapesAfterJSONEscapes(t *testing.T) {
	for _, escape := range []string{`\n`, `\t`, `\r`, `\"`, `\/`, `\u003c`, `\u000b`, `\u2014`, `\\\n`, `\\n`, `\\\"`, `\\u003c`} {
		for kind, v := range planted {
			q, _ := json.Marshal(v)
			text := []byte(`{"text":"before` + escape + string(q[1:len(q)-1]) + ` after"}`)
			out, n := MaskShapes(text)
			if n != 1 || !json.Valid(out) || !bytes.Contains(out, []byte(escape+"[redacted:"+kind+"]")) && !bytes.Contains(out, []byte("[redacted:"+kind+"]")) {
				t.Errorf("%s after %s: %d masked: %s", kind, escape, n, out)
			}
		}
	}
	for _, s := range []string{`"\u0041ghp_1234567890abcdefghijABCDEFGHIJ123456"`, `"x\u00"`, `\nA`} {
		if out, n := MaskShapes([]byte(s)); n != 0 {
			t.Errorf("%s masked: %s", s, out)
		}
	}
}

// TestMaskShapesEscapedSecret: a secret whose own characters a JSON
// encoder escaped — PHP's json_encode writes / as \/ (an AWS secret key,
// a bearer token or a PEM body holds /), Gson = as \u003d, any encoder
// may write \u0067 for g — is masked: its reader decodes the JSON and
// reads the secret whole. The result stays JSON, and what its reader
// reads holds nothing MaskShapes would mask as plain text. So too in a
// tool's text that is JSON itself.
func TestMaskShapesEscapedSecret(t *testing.T) {
	php := func(s string) string {
		q, _ := json.Marshal(s)
		return strings.ReplaceAll(string(q[1:len(q)-1]), "/", `\/`)
	}
	every := func(s string) string { // every character of a secret as \u00XX
		var b strings.Builder
		for _, r := range s {
			if r < 0x80 && isCredChar(byte(r)) {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				q, _ := json.Marshal(string(r))
				b.Write(q[1 : len(q)-1])
			}
		}
		return b.String()
	}
	for kind, v := range planted {
		for name, c := range map[string]struct {
			text  string
			depth int // how many times the text is JSON
		}{
			"php":          {`{"text":"before ` + php(v) + ` after"}`, 1},
			"every":        {`{"text":"before ` + every(v) + ` after"}`, 1},
			"php in JSON":  {`{"text":` + quote(`{"inner":"before `+php(v)+` after"}`) + `}`, 2},
			"every in key": {`{"before ` + every(v) + `":1}`, 0},
		} {
			out, n := MaskShapes([]byte(c.text))
			if n == 0 || !json.Valid(out) {
				t.Errorf("%s, %s: %d masked: %s", kind, name, n, out)
				continue
			}
			read := string(out)
			for range c.depth {
				var m map[string]any
				if err := json.Unmarshal([]byte(read), &m); err != nil {
					t.Fatalf("%s, %s: %v: %s", kind, name, err, read)
				}
				for _, x := range m {
					read = x.(string)
				}
			}
			if again, m := MaskShapesString(read); m != 0 || !strings.Contains(read, "[redacted:"+kind+"]") {
				t.Errorf("%s, %s: its reader reads %q (%d left: %q)", kind, name, read, m, again)
			}
		}
	}
	// Escapes that write no secret stay as they are.
	for _, s := range []string{`{"url":"https:\/\/example.com\/a\/b?c=d"}`, `"\u0041ghp_1234567890abcdefghijABCDEFGHIJ123456"`, `"x\u00"`, `\`, `\\`, `\u00zz`} {
		if out, n := MaskShapes([]byte(s)); n != 0 || string(out) != s {
			t.Errorf("%s: %d masked: %s", s, n, out)
		}
	}
}

func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// TestMaskShapesLeavesText: ordinary text that resembles a shape is kept,
// without a copy.
func TestMaskShapesLeavesText(t *testing.T) {
	for _, s := range []string{
		"Use Bearer authentication with your token.",
		"Basic usage: run the tool. Basic authentication is supported.",
		"Install scikit-learn; the task-sk-1 desk-top; sk-short",
		// Words that hold sk- within them (an sk- key is masked from 6
		// characters on, but only where it starts a word).
		"task-management, risk-assessment-v2, flask-sqlalchemy, ask-anything, disk-usage-report, sk-learn",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----",
		"AKIA is the prefix of AWS access key ids; AKIAshort",
		"the header is called Authorization: it carries credentials",
		"a JWT starts with eyJ and has three parts",
		"hf_hub is a library; npm_config_cache=/tmp",
	} {
		b := []byte(s)
		out, n := MaskShapes(b)
		if n != 0 || &out[0] != &b[0] {
			t.Errorf("%q masked: %q", s, out)
		}
	}
}

// TestMaskShapesRealDefinitions: the tool definitions of 15 npm servers
// hold nothing to mask.
func TestMaskShapesRealDefinitions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "gateway", "testdata", "toolsets", "*.json"))
	if len(files) < 15 {
		t.Fatalf("%d toolsets", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if out, n := MaskShapes(data); n != 0 {
			i := bytes.Index(out, []byte("[redacted"))
			t.Errorf("%s: %d masked: …%s…", filepath.Base(f), n, out[max(0, i-80):min(len(out), i+80)])
		}
	}
}

// TestMaskShapesAPIKeyForms: an sk- key from 6 characters on, and one an
// API's error shows partly masked.
func TestMaskShapesAPIKeyForms(t *testing.T) {
	for in, want := range map[string]string{
		"Incorrect API key provided: sk-abc***wxyz.":               "Incorrect API key provided: [redacted:api-key].",
		"OPENAI_API_KEY=sk-do-not-echo":                            "OPENAI_API_KEY=[redacted:api-key]",
		`"sk-proj-******************************************Qm0A"`: `"[redacted:api-key]"`,
		"sk-SK locale; sk-*** alone; task-sk-123456":               "sk-SK locale; sk-*** alone; task-sk-123456",
	} {
		if got, _ := MaskShapesString(in); got != want {
			t.Errorf("MaskShapesString(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskShapesPEMCutShort(t *testing.T) {
	res := []byte(`{"text":"key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ","other":"kept"}`)
	out, n := MaskShapes(res)
	if n != 1 || !json.Valid(out) || !strings.Contains(string(out), `"other":"kept"`) || strings.Contains(string(out), "b3Blbn") {
		t.Fatalf("%d: %s", n, out)
	}
}

func FuzzMaskShapes(f *testing.F) {
	for _, v := range planted {
		q, _ := json.Marshal(v)
		f.Add(q)
	}
	f.Add([]byte(`{"a":"Bearer abcdefghijklmnop1","b":"-----BEGIN PRIVATE KEY-----\n`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, n := MaskShapes(b)
		if n == 0 && !bytes.Equal(out, b) {
			t.Fatal("changed without a mask")
		}
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("JSON broken:\n%s\n%s", b, out)
		}
		if again, m := MaskShapes(out); m != 0 {
			t.Fatalf("masked twice: %s", again)
		}
	})
}

// BenchmarkMaskShapes is the cost of gateway.redact: results per MB of
// result: a 1 MiB tool result of text without secrets (the common case),
// and with one of each shape.
func BenchmarkMaskShapes(b *testing.B) {
	line := "The quick brown fox jumps over the lazy dog; id 12345, path /usr/share/doc, see https://example.com/a?b=c. "
	clean := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat(line, (1<<20)/len(line)) + `"}]}`)
	var secrets strings.Builder
	for _, v := range planted {
		q, _ := json.Marshal(v)
		secrets.WriteString(string(q[1:len(q)-1]) + " ")
	}
	dirty := []byte(`{"content":[{"type":"text","text":"` + secrets.String() + strings.Repeat(line, (1<<20)/len(line)) + `"}]}`)
	item := `{"node_id":"MDQ6VXNlcjE=","html_url":"https://github.com/some-org/some-repo/pull/1234","created_at":"2024-01-01T00:00:00Z","user_login":"octo-cat","sha":"9fceb02d0ae598e95dc970b74767f19372d61af8"},`
	records := []byte(`{"content":[{"type":"text","text":"[` + strings.ReplaceAll(strings.Repeat(item, (1<<20)/len(item)), `"`, `\"`) + `]"}]}`)
	for _, c := range []struct {
		name string
		data []byte
	}{{"clean", clean}, {"records", records}, {"secrets", dirty}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				MaskShapes(c.data)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/(float64(len(c.data))/(1<<20)), "µs/MB")
		})
	}
}

func TestAnchors(t *testing.T) {
	for _, a := range anchors {
		for _, tr := range byAnchor[a] {
			if tr.text[tr.off] != a {
				t.Errorf("%q: anchor %q at %d", tr.text, a, tr.off)
			}
		}
	}
	t.Logf("anchors %q", anchors)
}

func TestVisible(t *testing.T) {
	if got := Visible("a\u200bb\u202ec\tline\nnext\x1b[8m" + string(rune(0xe0041))); got != `a\u{200b}b\u{202e}c`+"\tline\nnext"+`\u{1b}[8m\u{e0041}` {
		t.Errorf("Visible: %q", got)
	}
	// A carriage return rewrites a reviewer's terminal line: shown.
	if got := Visible("safe\rIGNORE"); got != `safe\u{d}IGNORE` {
		t.Errorf("Visible: %q", got)
	}
	if s := "plain text, café"; Visible(s) != s {
		t.Error("plain text changed")
	}
}
