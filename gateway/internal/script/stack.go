package script

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// inputFrame matches a frame of the script's own code in a quickjs stack:
// "    at name (<input>:4:5)" or "    at <input>:4:11". The engine names
// the source of a Function constructor "<input>".
var inputFrame = regexp.MustCompile(`<input>:(\d+):(\d+)`)

// wrapperLines is how many lines the Function constructor puts before the
// script's first line ("(async function anonymous(" and ") {").
const wrapperLines = 2

// scriptStack returns the frames of stack that are the script's, as
// "    at line:column" of the script's own text, dropping the prelude's and
// the engine's. The second result is the first such frame's "line L,
// column C", or "".
func scriptStack(stack string) (string, string) {
	var b strings.Builder
	first := ""
	for line := range strings.SplitSeq(stack, "\n") {
		m := inputFrame.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		n -= wrapperLines
		if first == "" {
			first = fmt.Sprintf("line %d, column %s", n, m[2])
		}
		fmt.Fprintf(&b, "    at script:%d:%s\n", n, m[2])
	}
	return b.String(), first
}

// scriptError is the ScriptError of an exception with message and the
// engine's stack: the stack cut to the script's frames, and for a syntax
// error, which the engine reports without a place in its message, the place.
func scriptError(message, stack string) *ScriptError {
	st, at := scriptStack(stack)
	if at != "" && strings.HasPrefix(message, "SyntaxError:") {
		message += " (" + at + ")"
	}
	return &ScriptError{Message: message, Stack: st}
}
