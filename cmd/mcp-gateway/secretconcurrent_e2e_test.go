package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestSecretSetConcurrent: `secret set` of different names from several
// processes at once loses none of them (the store's lock orders the
// read-change-write of each), and the store reads whole after.
func TestSecretSetConcurrent(t *testing.T) {
	t.Parallel()
	env := baseEnv(t, "MCP_GATEWAY_SECRETS=file")
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mustSetSecret(t, env, fmt.Sprintf("s%02d.KEY", i), fmt.Sprintf("value-%02d-of-many", i))
		}()
	}
	wg.Wait()
	out, errOut, code := secretCLI(t, env, "", "ls")
	if code != 0 {
		t.Fatalf("secret ls: exit %d\n%s", code, errOut)
	}
	for i := range n {
		if name := fmt.Sprintf("s%02d.KEY", i); !strings.Contains(out, name+"\n") {
			t.Errorf("%s was lost:\n%s", name, out)
		}
	}
}
