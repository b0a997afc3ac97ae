package trust

import (
	"fmt"
	"strings"
)

// Diff is the line diff of two definitions' indented forms, as a person
// reviews a change: lines only in old start with "-", lines only in new
// with "+", unchanged lines with " ", and long runs of unchanged lines
// are cut to their first and last context lines around a
// "@@" line. A definition not pinned before (old nil) is all "+".
func Diff(old, new Definition) string {
	var a []string
	if old != nil {
		a = strings.Split(old.Indented(), "\n")
	}
	b := strings.Split(new.Indented(), "\n")
	ops := lineOps(a, b)
	const context = 3
	var out strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind != ' ' {
			fmt.Fprintf(&out, "%c%s\n", ops[i].kind, ops[i].text)
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].kind == ' ' {
			j++
		}
		run := ops[i:j]
		keepHead, keepTail := context, context
		if i == 0 {
			keepHead = 0
		}
		if j == len(ops) {
			keepTail = 0
		}
		if len(run) > keepHead+keepTail+2 {
			for _, o := range run[:keepHead] {
				fmt.Fprintf(&out, " %s\n", o.text)
			}
			fmt.Fprintf(&out, "@@ %d unchanged lines @@\n", len(run)-keepHead-keepTail)
			for _, o := range run[len(run)-keepTail:] {
				fmt.Fprintf(&out, " %s\n", o.text)
			}
		} else {
			for _, o := range run {
				fmt.Fprintf(&out, " %s\n", o.text)
			}
		}
		i = j
	}
	return out.String()
}

type lineOp struct {
	kind byte // ' ', '-' or '+'
	text string
}

// maxCells bounds the table of lineOps: two definitions of about 2,000
// lines each. Longer ones are shown as all removed and all added.
const maxCells = 4 << 20

// lineOps is a shortest edit script from a to b (longest common
// subsequence), removals before additions within a change.
func lineOps(a, b []string) []lineOp {
	// Common head and tail first: most changes are small.
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var ops []lineOp
	for _, s := range a[:head] {
		ops = append(ops, lineOp{' ', s})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if (len(ma)+1)*(len(mb)+1) > maxCells {
		for _, s := range ma {
			ops = append(ops, lineOp{'-', s})
		}
		for _, s := range mb {
			ops = append(ops, lineOp{'+', s})
		}
	} else {
		ops = append(ops, lcsOps(ma, mb)...)
	}
	for _, s := range a[len(a)-tail:] {
		ops = append(ops, lineOp{' ', s})
	}
	return ops
}

func lcsOps(a, b []string) []lineOp {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:].
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var ops, adds []lineOp
	flush := func() { ops, adds = append(ops, adds...), adds[:0] }
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			ops = append(ops, lineOp{' ', a[i]})
			i, j = i+1, j+1
		case j < m && (i == n || l[i][j+1] >= l[i+1][j]):
			adds = append(adds, lineOp{'+', b[j]})
			j++
		default:
			ops = append(ops, lineOp{'-', a[i]})
			i++
		}
	}
	flush()
	return ops
}
