package safetext

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
)

// maskCases are Mask's golden inputs and outputs.
var maskCases = []struct{ in, want string }{
	{"nothing here", "nothing here"},
	{"https://example.com/mcp", "https://example.com/mcp"},
	{"https://u:p@h/x?a=1&token=t#frag", "https://u:***@h/x?a=1&token=***#frag"},
	{"https://u@h/x", "https://***@h/x"},
	{"https://${TOKEN}@h/x", "https://***@h/x"},
	{"https://h/x?apikey=", "https://h/x?apikey=***"},
	// Query secrets by name and by shape.
	{"https://acct.blob.core.windows.net/c?sv=2021-08-06&se=2030-01-01&sig=AbC%2Fdef", "https://acct.blob.core.windows.net/c?sv=2021-08-06&se=2030-01-01&sig=***"},
	{"https://s3.example.com/b?X-Amz-Signature=abc123&X-Amz-Credential=AK%2F1&page=2", "https://s3.example.com/b?X-Amz-Signature=***&X-Amz-Credential=***&page=2"},
	{"https://h/hook?id=7&c=q8Zr3kT9xW2mB7nL4pV6sY1d", "https://h/hook?id=7&c=***"},
	// A URL anywhere in text: a connection string, an error.
	{"DATABASE_URL is postgres://app:hunter2@db:5432/prod now", "DATABASE_URL is postgres://app:***@db:5432/prod now"},
	{`Post "https://mcp.example.com/mcp?sig=s3cr3t": dial tcp: refused`, `Post "https://mcp.example.com/mcp?sig=***": dial tcp: refused`},
	// Credentials and key forms.
	{"header Authorization: Bearer abc.def.ghi-123", "header Authorization: Bearer ***"},
	{"auth=Bearer abcdef123456 token=Basic dXNlcjpwYXNz", "auth=Bearer *** token=Basic ***"},
	{"key sk-proj-abcdefghijklmnop1234 and sk-abc***xyz", "key *** and ***"},
	{"gh token ghp_aBcD1234EfGh5678IjKl9012MnOp3456QrSt", "gh token ***"},
	{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt ***"},
	// NAME=VALUE and JSON members whose name looks secret.
	{"--password=hunter2 --user=bob PGPASSWORD=pw2 level=debug", "--password=*** --user=bob PGPASSWORD=*** level=debug"},
	// A reference to a variable names a secret; it is not one.
	{"--token=${MY_TOKEN} https://h/x?key=${KEY}&sig=$SIG&auth=${A:-lit}", "--token=${MY_TOKEN} https://h/x?key=${KEY}&sig=***&auth=***"},
	{`{"access_token":"at-1","token_type":"bearer","scope":"mcp","id":"x"}`, `{"access_token":"***","token_type":"***","scope":"mcp","id":"x"}`},
	// The shapes table's, wherever they are (Mask shares it).
	{"authorization: token 0123456789abcdef in the request", "authorization: token *** in the request"},
	{"hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678 loaded", "*** loaded"},
	{"key -----BEGIN PRIVATE KEY----- MIIEvQIBADANBg -----END PRIVATE KEY----- done", "key *** done"},
	{"https://h/x/ghp_1234567890abcdefghijABCDEFGHIJ123456/y", "https://h/x/***/y"},
	{"Incorrect API key provided: sk-proj-****************************Qm0A.", "Incorrect API key provided: ***."},
	{"auth=Bearer", "auth=Bearer"},
	// After a JSON escape (a backend's JSON on its stderr, a result in an
	// error): the escape is the character it stands for, no part of a word.
	{`{"log":"line\nghp_aBcD1234EfGh5678IjKl9012MnOp3456QrSt"}`, `{"log":"line\n***"}`},
	{`"a\tghp_abcdefghijklmnopqrst1234\rBearer abc123def456 \u003cgithub_pat_abcdefghij0123456789\u003e"`, `"a\t***\rBearer *** \u003c***\u003e"`},
	{`"x\nbearer\tabc123def456 \u0026sig=s3cr3t \nkey=v1"`, `"x\nbearer\t*** \u0026sig=*** \nkey=***"`},
}

func TestMask(t *testing.T) {
	for _, c := range maskCases {
		if got := Mask(c.in, "***"); got != c.want {
			t.Errorf("Mask(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

// The key and credential patterns Mask had of its own before it shared the
// shapes table, frozen here as the oracle of what it masked.
var (
	formerCred = regexp.MustCompile(`(?i)\b(bearer|basic)\s+([A-Za-z0-9._~+/=*-]{6,})`)
	formerKey  = regexp.MustCompile(`\bsk-[A-Za-z0-9_*-]{6,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bglpat-[A-Za-z0-9_-]{20,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{35}|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)
)

// formerSecrets are the secrets the former patterns find in s, but for a
// word of prose after bearer or basic ("Bearer authentication": letters
// only, under 20), which Mask leaves on purpose.
func formerSecrets(s string) []string {
	var secrets []string
	for _, m := range formerCred.FindAllStringSubmatch(s, -1) {
		if len(m[2]) >= 20 || strings.IndexFunc(m[2], func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			secrets = append(secrets, m[2])
		}
	}
	return append(secrets, formerKey.FindAllString(s, -1)...)
}

// TestMaskKeepsFormerMasks: over Mask's golden inputs, the configuration's
// golden files (keys and credentials written in them) and the planted
// secret of each shape, every secret the former patterns found is masked
// still.
func TestMaskKeepsFormerMasks(t *testing.T) {
	var inputs []string
	for _, c := range maskCases {
		inputs = append(inputs, c.in)
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, strings.Split(string(data), "\n")...)
	}
	for _, v := range planted {
		inputs = append(inputs, "before "+v+" after")
	}
	// What the shared table alone left readable (its rules are strict,
	// for tool results).
	inputs = append(inputs,
		"with bearer abc123def456ghi789jkl", "using token Bearer abcdefghijklmnopqrst", "Bearer 1234abcd",
		"X-Api-Key: Basic abc123", "basic dXNlcjpwYXNzd29yZA==", "Bearer\tabc123def456", "BEARER  abc123def456",
		"ghp_abcdefghijklmnopqrst1234", "token=x github_pat_abcdefghij0123456789 y")
	found := 0
	for _, in := range inputs {
		secrets := formerSecrets(in)
		found += len(secrets)
		out := Mask(in, "***")
		for _, sec := range secrets {
			if strings.Contains(out, sec) {
				t.Errorf("Mask(%q) = %q: %q survives", in, out, sec)
			}
		}
	}
	if found < 20 {
		t.Errorf("only %d secrets in the inputs", found)
	}
}

// TestMaskLeavesLogLines: ordinary log and status lines, which name paths,
// UUIDs, hashes and tools, lose nothing to Mask.
func TestMaskLeavesLogLines(t *testing.T) {
	for _, s := range []string{
		"2026-01-02T03:04:05Z INFO server listening on port 3000 with 12 tools (pid 4242)",
		"reading /home/me/.config/mcp-gateway/config.yaml and /usr/lib/node_modules/@modelcontextprotocol/server-github/dist/index.js",
		`C:\Users\me\AppData\Local\mcp-gateway\tokens\github.json`,
		"session 550e8400-e29b-41d4-a716-446655440000 opened; request id 7f3c9a2e-1b4d-4c8e-9f0a-2d6b8e1c3a57",
		"tool build_9fceb02d0ae598e95dc970b74767f19372d61af8.run_tests called (sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855)",
		"github.create_pull_request took 812ms; memory.read_graph ok; task-sk-1 desk-top sk-short",
		"Use Bearer authentication with your token; basic usage: run the tool; bearer tokens expire",
		"npm_config_cache=/tmp/npm level=debug user=bob AKIA is the prefix of key ids; hf_hub installed",
		"-----BEGIN CERTIFICATE----- MIIB -----END CERTIFICATE-----",
		`{"name":"search_issues","description":"Search issues","inputSchema":{"type":"object"}}`,
		"https://api.github.com/repos/org/repo/pulls?state=open&per_page=100&page=2",
	} {
		if got := Mask(s, "***"); got != s {
			t.Errorf("Mask(%q)\n = %q", s, got)
		}
	}
}

func TestLooksRandom(t *testing.T) {
	random := []string{
		"9dK2/qLm+Xz7Vb3Rt8Yw1Ns4Pj6Hc0GfEaUoIiQe", // an AWS secret key's form
		"d41d8cd98f00b204e9800998ecf8427e",         // hex
		"550e8400-e29b-41d4-a716-446655440000",     // UUID
		"Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",         // base64
		"q8Zr3kT9xW2mB7nL4pV6sY1d",
		"ntn_4x7Kq9Zr2mB8vL1pW6sY3dF5gH0jN",
	}
	words := []string{
		"@modelcontextprotocol/server-filesystem",
		"/home/me/.memory.jsonl",
		"--allowed-directories",
		"mcp-server-postgres-2024",
		"github.com/org/repo",
		"2025-06-18",
		"MyServerName2024Production",
		"org.example.server.Main1",
		"node_modules/.bin/tsx",
		"production_database_2",
		"short1A",
		"C:\\Users\\me\\config.yaml",
		"deadbeef",
	}
	for _, v := range random {
		if !looksRandom(v) {
			t.Errorf("LooksRandom(%q) = false", v)
		}
	}
	for _, v := range words {
		if looksRandom(v) {
			t.Errorf("LooksRandom(%q) = true", v)
		}
	}
}

func TestMaskArgs(t *testing.T) {
	in := []string{"-y", "@scope/server", "--token", "abc", "--password=pw", "--api-key", "k1", "--token-file", "/run/tok",
		"--no-auth", "/data", "postgres://u:pw@h/db", "q8Zr3kT9xW2mB7nL4pV6sY1d", "-e", "GITHUB_TOKEN=x", "--auth", "--verbose", "--token", "${TOKEN}"}
	want := []string{"-y", "@scope/server", "--token", "***", "--password=***", "--api-key", "***", "--token-file", "/run/tok",
		"--no-auth", "/data", "postgres://u:***@h/db", "***", "-e", "GITHUB_TOKEN=***", "--auth", "--verbose", "--token", "${TOKEN}"}
	if got := MaskArgs(in, "***"); !slices.Equal(got, want) {
		t.Errorf("MaskArgs\n = %q\nwant %q", got, want)
	}
	if MaskArgs(nil, "***") != nil {
		t.Error("MaskArgs(nil) is not nil")
	}
}

func BenchmarkMaskStderrLine(b *testing.B) {
	line := "2026-01-02T03:04:05Z INFO server listening on port 3000 with 12 tools (pid 4242)"
	for b.Loop() {
		Mask(line, "***")
	}
}

// FuzzMask: Mask never fails, masks what it masked once again the same
// way (what it shows is stable), masks every secret the former patterns
// found (formerSecrets), and leaves text it finds nothing in untouched.
func FuzzMask(f *testing.F) {
	for _, s := range []string{"https://u:p@h/x?a=1&token=t#f", "--password=pw postgres://a:b@c/d", `{"access_token":"x"}`, "Bearer abcdefgh", "plain",
		"with bearer abc123def456ghi789jkl", "X-Api-Key: Basic abc123", "ghp_abcdefghijklmnopqrst1234 x", "BEARER  abc123def456", "Bearer authentication"} {
		f.Add(s)
	}
	// Secrets right after a JSON escape once the text is JSON: \n, \t,
	// \r, \" and \u00XX (Go's "<", a control character, one beyond ASCII).
	for _, s := range []string{"line\nghp_abcdefghijklmnopqrst1234", "a\tBearer abc123def456", "x\rbearer\nabcdefgh12", "\"ghp_abcdefghijklmnopqrst1234\"",
		"<ghp_abcdefghijklmnopqrst1234>", "\x0bgithub_pat_abcdefghij0123456789", "\u2014eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.dozjgNryP4J3jVmN", "path\\/ghp_abcdefghijklmnopqrst1234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Mask(s, "***")
		if twice := Mask(once, "***"); twice != once {
			t.Errorf("Mask(%q) = %q, masked again %q", s, once, twice)
		}
		// Each secret found is masked: what stays of its text is
		// another occurrence ("Bearer 000000 000000" keeps the second).
		found := map[string]int{}
		for _, sec := range formerSecrets(s) {
			if !strings.Contains(sec, "***") {
				found[sec]++
			}
		}
		for sec, n := range found {
			if strings.Count(once, sec) > strings.Count(s, sec)-n {
				t.Errorf("Mask(%q) = %q: %q survives", s, once, sec)
			}
			// The same secrets in s written as a JSON string, as Go and
			// as an ASCII-only encoder (Python's) write it.
			for _, quote := range []func(string) string{goQuote, asciiQuote} {
				q, enc := quote(s), quote(sec)
				enc = enc[1 : len(enc)-1]
				if out := Mask(q, "***"); strings.Count(out, enc) > strings.Count(q, enc)-n {
					t.Errorf("Mask(%s) = %s: %q survives", q, out, sec)
				}
			}
		}
		if _, n := MaskShapesString(s); n == 0 && !strings.Contains(s, "://") && !strings.ContainsAny(s, "=\"") && maskLoose(s, "***") == s && once != s {
			t.Errorf("Mask(%q) = %q without a trigger", s, once)
		}
		MaskArgs([]string{s, s}, "***")
	})
}

// goQuote is s as a JSON string as Go writes it: <, > and & as \u003c…,
// control characters as \n, \t, \r or \u00XX.
func goQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// asciiQuote is s as a JSON string in ASCII (Python's json.dumps writes
// it so): every character beyond ASCII as \uXXXX.
func asciiQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r >= 0x7f && r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
