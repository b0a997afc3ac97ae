package config

import (
	"errors"
	"strings"
	"testing"
)

// A YAML syntax error names the line where the text goes wrong, not the
// line where the list or mapping it breaks began (yaml.v3 says the latter
// for errors of the structure, such as a wrong indentation).
func TestYAMLErrorLine(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
	}{
		{"servers:\n  - name: a\n    command: x\n   args: [y]\n", 4},
		{"gateway:\n  separator: _\n servers: []\n", 3},
		{"servers:\n  - name: a\n    command: x\n      args: [y]\n", 4},
		{"servers:\n\t- name: a\n", 2},
		{"# a comment\nservers:\n  - name: a\n    command: x\n  - name: b\n     command: y\n", 6},
		// An unclosed bracket: the last line that could have closed it.
		{"servers:\n  - name: a\n    args: [\n      x,\n      y\n    command: x\n", 5},
		{"servers: [\n  {name: a, command: x},\n", 2},
	} {
		_, _, _, err := loadText(t, tc.text, nil, Flags{})
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, "invalid YAML") || e.Line != tc.line {
			t.Errorf("%q: %v, want line %d", tc.text, err, tc.line)
		}
	}
}
