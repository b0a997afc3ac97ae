package proc

import (
	"errors"
	"strings"
)

// batchCommandLine is the Windows command line that runs the batch file
// script (npx.cmd, a .bat wrapper) with args through cmd.exe at shell:
//
//	"C:\...\cmd.exe" /d /e:on /v:off /s /c ""C:\...\npx.cmd" -y "a b""
//
// /d skips AutoRun commands, /v:off keeps "!" literal, /s strips exactly the
// outer quotes. The batch file hands its arguments (%*) to a program that
// splits them by the C runtime's rules, and cmd.exe reads the same text
// first, by rules of its own; the arguments are written for both:
//
//   - For the program: an argument with anything but letters, digits,
//     #$*+-./:?@\_ and non-ASCII characters is quoted, and a quote inside
//     it is \" (backslashes before a quote doubled). That is the one
//     spelling every Windows argument parser reads alike: the Microsoft C
//     runtime before and after 2008, CommandLineToArgvW, and Go's os.Args
//     disagree on "" inside quotes (a doubled quote splits `say "hi" now`
//     into `say "hi` and `now` for Go and CommandLineToArgvW).
//   - For cmd.exe, which knows no \" and sees each quote open or close a
//     quoted stretch: every character cmd.exe would act on (& | < > ^ ( ) %
//     and all other punctuation) is written where cmd.exe sees quotes, by
//     closing and reopening the program's quotes around it where needed
//     (`"x\""&y` is x"&y); "%" cannot be escaped even there and becomes
//     "%%cd:~,%", which cmd.exe expands to "%" (an empty substring of %cd%
//     after a literal "%"), so no variable is expanded.
//
// After an argument with an odd number of quotes cmd.exe's idea of what is
// quoted is the reverse of the program's for the rest of the line; the
// arguments after it are written for that, so %* still reaches the program
// intact, though a batch file that splits %1...%9 itself sees the later
// arguments joined. Line breaks and NULs cannot pass through cmd.exe at
// all: an error.
func batchCommandLine(shell, script string, args []string) (string, error) {
	if strings.ContainsAny(script, "\"\r\n\x00") {
		return "", errors.New("a batch file's path cannot contain a quote or a line break")
	}
	var b strings.Builder
	b.WriteString(`"` + shell + `" /d /e:on /v:off /s /c ""` + script + `"`)
	cmdQuoted := false // whether cmd.exe sees the text so far as inside quotes
	for _, a := range args {
		b.WriteByte(' ')
		if err := appendBatchArg(&b, a, &cmdQuoted); err != nil {
			return "", err
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// batchPlain reports whether c can stand unquoted in a batch file's
// command line: ASCII letters and digits, a few inert punctuation
// characters, and anything beyond ASCII. Everything else is quoted, which
// is safe for all of them; an allowlist cannot miss a special character.
func batchPlain(c rune) bool {
	return c > 0x7f || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.ContainsRune(`#$*+-./:?@\_`, c)
}

// appendBatchArg writes arg for the program and for cmd.exe (see
// batchCommandLine); cmdQuoted is cmd.exe's quote state, before and after.
// No two quotes are ever written side by side except after a backslash,
// where every parser reads \" as a literal quote and the next one as
// opening or closing.
func appendBatchArg(b *strings.Builder, arg string, cmdQuoted *bool) error {
	if strings.ContainsAny(arg, "\r\n\x00") {
		return errors.New("an argument with a line break or NUL cannot be passed to a batch file")
	}
	plain := strings.IndexFunc(arg, func(c rune) bool { return !batchPlain(c) }) < 0
	// A trailing backslash is quoted too, so that a batch file's "%~1"
	// does not end in \" (Rust's rule).
	if arg != "" && plain && !strings.HasSuffix(arg, `\`) {
		b.WriteString(arg) // plain text means the same inside quotes or out, to both
		return nil
	}
	quoted := false // the program's quote state
	backslashes := 0
	// flush writes the pending backslashes, doubled before a quote.
	flush := func(beforeQuote bool) {
		n := backslashes
		if beforeQuote {
			n *= 2
		}
		b.WriteString(strings.Repeat(`\`, n))
		backslashes = 0
	}
	toggle := func() {
		flush(true)
		b.WriteByte('"')
		quoted = !quoted
		*cmdQuoted = !*cmdQuoted
	}
	// Quoted as a whole, as the C runtime would quote it, while cmd.exe
	// agrees; after an odd quote count the quotes go only where needed.
	if !*cmdQuoted || arg == "" {
		toggle()
	}
	for _, c := range arg {
		switch {
		case c == '\\':
			backslashes++
		case c == '"':
			flush(true)
			b.WriteString(`\"`)
			*cmdQuoted = !*cmdQuoted
		case c == ' ' || c == '\t':
			if !quoted {
				toggle()
			}
			flush(false)
			b.WriteRune(c)
		case batchPlain(c):
			flush(false)
			b.WriteRune(c)
		default:
			if !*cmdQuoted {
				toggle()
			}
			flush(false)
			if c == '%' {
				b.WriteString("%%cd:~,%")
			} else {
				b.WriteRune(c)
			}
		}
	}
	if quoted {
		toggle()
	}
	flush(false)
	return nil
}
