package proc

import "testing"

// The expected lines follow cmd.exe's rules (see batchCommandLine); they
// are checked here on every OS, and the workflow runs a real batch file on
// Windows (TestBatchFileArgs).
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
		{[]string{`say "hi"`}, head + ` "say ""hi""""`},
		{[]string{`C:\dir\ x\`}, head + ` "C:\dir\ x\\""`},
		{[]string{`a\"b`}, head + ` "a\\""b""`},
		{[]string{"%PATH%", "100%"}, head + ` "%%cd:~,%PATH%%cd:~,%" "100%%cd:~,%""`},
		{[]string{"café", "a=b", "--flag=1"}, head + ` café "a=b" "--flag=1""`},
		{[]string{"!x!"}, head + ` "!x!""`},
		{[]string{`C:\plain\path`}, head + ` C:\plain\path"`},
	} {
		got, err := batchCommandLine(shell, `C:\Program Files\nodejs\npx.cmd`, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("%q:\n got %s (%v)\nwant %s", tc.args, got, err, tc.want)
		}
	}
	for _, bad := range []string{"a\nb", "a\rb", "a\x00b"} {
		if _, err := batchCommandLine(shell, `C:\x.bat`, []string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
