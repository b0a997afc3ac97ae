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
// outer quotes. Each argument is quoted unless it is only letters, digits,
// #$*+-./:?@\_ and non-ASCII characters, with the C runtime's backslash
// rule before a quote (the batch file passes the arguments on to a program
// that parses them that way) and an inner quote doubled. "%" cannot be escaped inside
// quotes; it becomes "%%cd:~,%", which cmd.exe expands to "%" (an empty
// substring of %cd% after a literal "%"), so no variable is expanded.
// Line breaks and NULs cannot pass through cmd.exe at all: an error.
func batchCommandLine(shell, script string, args []string) (string, error) {
	var b strings.Builder
	b.WriteString(`"` + shell + `" /d /e:on /v:off /s /c "`)
	if err := appendBatchArg(&b, script, true); err != nil {
		return "", err
	}
	for _, a := range args {
		b.WriteByte(' ')
		if err := appendBatchArg(&b, a, false); err != nil {
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

func appendBatchArg(b *strings.Builder, arg string, quote bool) error {
	if strings.ContainsAny(arg, "\r\n\x00") {
		return errors.New("an argument with a line break or NUL cannot be passed to a batch file")
	}
	quote = quote || arg == "" || strings.IndexFunc(arg, func(c rune) bool { return !batchPlain(c) }) >= 0
	if quote {
		b.WriteByte('"')
	}
	backslashes := 0
	for _, r := range arg {
		switch r {
		case '\\':
			backslashes++
			b.WriteByte('\\')
			continue
		case '"':
			// Backslashes before a quote are doubled; the quote doubled.
			b.WriteString(strings.Repeat(`\`, backslashes))
			b.WriteString(`""`)
		case '%':
			b.WriteString("%%cd:~,%")
		default:
			b.WriteRune(r)
		}
		backslashes = 0
	}
	if quote {
		// Backslashes before the closing quote are doubled too.
		b.WriteString(strings.Repeat(`\`, backslashes))
		b.WriteByte('"')
	}
	return nil
}
