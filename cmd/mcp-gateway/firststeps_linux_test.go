package main

import (
	"strings"
	"testing"
)

// A one-shot call exits quietly: stopping a server whose descendant ends
// after it (npx's node under its sh: testbackend -grandchild) is no
// "killed orphaned descendants" warning, and a list refresh the stop cuts
// short is no warning either.
func TestFirstStepsCallExitsQuietly(t *testing.T) {
	t.Parallel()
	cfg := beConfig(t, tb("tb", "-grandchild"), tb("other", "-list-changed-on-init"))
	out, errOut, code := runCLI(t, "call", "tb.echo", `{"m":1}`, "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "WRN") || strings.Contains(l, "ERR") {
			t.Errorf("the call's own shutdown warns: %s\nstderr:\n%s", l, errOut)
		}
	}
}
