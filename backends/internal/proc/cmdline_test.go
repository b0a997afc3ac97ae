package proc

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The expected lines follow cmd.exe's rules (see batchCommandLine); they
// are checked here on every OS, against models of cmd.exe and of the three
// ways Windows programs split a command line, and a real batch file runs
// them under Wine and on Windows (TestBatchFileArgs).
func TestBatchCommandLine(t *testing.T) {
	const shell = `C:\Windows\system32\cmd.exe`
	const head = `"` + shell + `" /d /e:on /v:off /s /c ""C:\Program Files\nodejs\npx.cmd"`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, head + `"`},
		{[]string{"-y", "@modelcontextprotocol/server-memory"}, head + ` -y @modelcontextprotocol/server-memory"`},
		{[]string{"a b", ""}, head + ` "a b" """`},
		{[]string{"x&calc", "a|b", "<x>", "^"}, head + ` "x&calc" "a|b" "<x>" "^""`},
		{[]string{`say "hi"`}, head + ` "say \"hi\"""`},
		{[]string{`say "hi" now`}, head + ` "say \"hi\" now""`},
		{[]string{`C:\dir\ x\`}, head + ` "C:\dir\ x\\""`},
		{[]string{`C:\dir\`}, head + ` "C:\dir\\""`},
		{[]string{`a\"b`}, head + ` "a\\\"b""`},
		{[]string{"%PATH%", "100%"}, head + ` "%%cd:~,%PATH%%cd:~,%" "100%%cd:~,%""`},
		{[]string{"café", "a=b", "--flag=1"}, head + ` café "a=b" "--flag=1""`},
		{[]string{"!x!"}, head + ` "!x!""`},
		{[]string{`C:\plain\path`}, head + ` C:\plain\path"`},
		// The "&" closes the program's quotes to be inside cmd.exe's; after
		// the odd quote, cmd.exe's quotes are the program's reversed.
		{[]string{`x"&calc`, "a b", "y&z"}, head + ` "x\""&calc a" b" y&z"`},
	} {
		got, err := batchCommandLine(shell, `C:\Program Files\nodejs\npx.cmd`, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("%q:\n got %s (%v)\nwant %s", tc.args, got, err, tc.want)
		}
		checkBatchLine(t, got, tc.args)
	}
	for _, bad := range []string{"a\nb", "a\rb", "a\x00b"} {
		if _, err := batchCommandLine(shell, `C:\x.bat`, []string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzBatchCommandLine: any arguments (split at \x01) reach a program
// unchanged under each parser, and cmd.exe acts on none of their
// characters.
func FuzzBatchCommandLine(f *testing.F) {
	for _, s := range []string{"", `say "hi" now`, "\"\x01a b", "x\"&y\x01\"\x01a b&c", `a\\"b\`, "%PATH%\x01\"%x%\"", "\"\"\"\x01\t\x01^", `\"&\`, "a\x01\x01b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("a Windows command line is UTF-16: invalid UTF-8 cannot reach it")
		}
		args := strings.Split(s, "\x01")
		line, err := batchCommandLine(`C:\cmd.exe`, `C:\x.cmd`, args)
		if strings.ContainsAny(s, "\r\n\x00") {
			if err == nil {
				t.Fatalf("%q: no error", args)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		checkBatchLine(t, line, args)
	})
}

// checkBatchLine runs line through a model of cmd.exe and checks that it
// acts on nothing in the arguments, and that the batch file's %* splits
// into args under each Windows argument parser.
func checkBatchLine(t *testing.T, line string, args []string) {
	t.Helper()
	_, rest, ok := strings.Cut(line, " /s /c ")
	if !ok || !strings.HasPrefix(rest, `"`) || !strings.HasSuffix(rest, `"`) {
		t.Fatalf("not a /s /c line: %s", line)
	}
	rest = rest[1 : len(rest)-1] // what /s strips
	// cmd.exe's phase 1: %...% expansion; the only "%" must be the escape.
	expanded := strings.ReplaceAll(rest, "%%cd:~,%", "%")
	if strings.Count(rest, "%") != 3*strings.Count(rest, "%%cd:~,%") {
		t.Errorf("%q: a %% cmd.exe could expand: %s", args, line)
	}
	// Phase 2: outside quotes (each quote opens or closes), cmd.exe acts on
	// punctuation; only plain characters, blanks and backslashes may be there.
	quoted := false
	for _, c := range rest {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && !batchPlain(c) && c != ' ' && c != '\t':
			t.Errorf("%q: cmd.exe acts on %q outside quotes: %s", args, c, line)
		}
	}
	// The quoted script, then the arguments: the batch file's %*.
	end := strings.IndexByte(expanded[1:], '"')
	if !strings.HasPrefix(expanded, `"`) || end < 0 {
		t.Fatalf("no quoted script: %s", line)
	}
	params := strings.TrimPrefix(expanded[end+2:], " ")
	if len(args) == 0 {
		if params != "" {
			t.Errorf("no arguments, but %q", params)
		}
		return
	}
	// The batch file runs `"program" %*`.
	for name, split := range map[string]func(string) []string{"Go": goArgs, "C runtime (2008 and later)": ucrtArgs, "CommandLineToArgvW": shell32Args} {
		if got := split(params); !slices.Equal(got, args) {
			t.Errorf("%s reads %q as %q, want %q", name, params, got, args)
		}
	}
}

// goArgs splits a command line as Go's os package does on Windows: in
// quotes, "" is a literal quote and ends the quotes.
func goArgs(cmd string) []string {
	var args []string
	for len(cmd) > 0 {
		if cmd[0] == ' ' || cmd[0] == '\t' {
			cmd = cmd[1:]
			continue
		}
		var b []byte
		inquote, nslash := false, 0
		for ; len(cmd) > 0; cmd = cmd[1:] {
			c := cmd[0]
			switch c {
			case ' ', '\t':
				if !inquote {
					goto done
				}
			case '"':
				b = append(b, strings.Repeat(`\`, nslash/2)...)
				if nslash%2 == 0 {
					if inquote && len(cmd) > 1 && cmd[1] == '"' {
						b = append(b, c)
						cmd = cmd[1:]
					}
					inquote = !inquote
				} else {
					b = append(b, c)
				}
				nslash = 0
				continue
			case '\\':
				nslash++
				continue
			}
			b = append(b, strings.Repeat(`\`, nslash)...)
			nslash = 0
			b = append(b, c)
		}
	done:
		b = append(b, strings.Repeat(`\`, nslash)...)
		args = append(args, string(b))
	}
	return args
}

// ucrtArgs splits a command line as the C runtime does since 2008: in
// quotes, "" is a literal quote and the quotes go on.
func ucrtArgs(cmd string) []string {
	var args []string
	i := 0
	for {
		for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t') {
			i++
		}
		if i >= len(cmd) {
			return args
		}
		var b []byte
		inquote := false
		for i < len(cmd) && (inquote || cmd[i] != ' ' && cmd[i] != '\t') {
			n := 0
			for i < len(cmd) && cmd[i] == '\\' {
				n++
				i++
			}
			if i < len(cmd) && cmd[i] == '"' {
				b = append(b, strings.Repeat(`\`, n/2)...)
				if n%2 == 1 {
					b = append(b, '"')
				} else if inquote && i+1 < len(cmd) && cmd[i+1] == '"' {
					b = append(b, '"')
					i++
				} else {
					inquote = !inquote
				}
				i++
				continue
			}
			b = append(b, strings.Repeat(`\`, n)...)
			if i < len(cmd) && (inquote || cmd[i] != ' ' && cmd[i] != '\t') {
				b = append(b, cmd[i])
				i++
			}
		}
		args = append(args, string(b))
	}
}

// shell32Args splits a command line as CommandLineToArgvW does (Wine's
// reading of it): of a run of quotes, every third is a literal quote, and
// a pair in quotes ends them.
func shell32Args(cmd string) []string {
	var args []string
	s := []byte(cmd)
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	if len(s) == 0 {
		return nil
	}
	var d []byte
	qcount, bcount := 0, 0
	for len(s) > 0 {
		switch {
		case (s[0] == ' ' || s[0] == '\t') && qcount == 0:
			args = append(args, string(d))
			d = nil
			bcount = 0
			for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
				s = s[1:]
			}
			if len(s) == 0 {
				return args
			}
		case s[0] == '\\':
			d = append(d, '\\')
			s = s[1:]
			bcount++
		case s[0] == '"':
			if bcount%2 == 0 {
				d = d[:len(d)-bcount/2]
				qcount++
			} else {
				d = d[:len(d)-bcount/2-1]
				d = append(d, '"')
			}
			s = s[1:]
			bcount = 0
			for len(s) > 0 && s[0] == '"' {
				qcount++
				if qcount == 3 {
					d = append(d, '"')
					qcount = 0
				}
				s = s[1:]
			}
			if qcount == 2 {
				qcount = 0
			}
		default:
			d = append(d, s[0])
			s = s[1:]
			bcount = 0
		}
	}
	return append(args, string(d))
}
