package main

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestReplicaName: a replica is named by gateway.http.replica, else by its
// host name's first label and the port it listens on, so that the pods of
// a Deployment and the processes of one machine differ, and a restart
// keeps the name.
func TestReplicaName(t *testing.T) {
	if got := replicaName("gw-a", &net.TCPAddr{Port: 8000}); got != "gw-a" {
		t.Errorf("configured: %q", got)
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	a, b := replicaName("", &net.TCPAddr{Port: 8000}), replicaName("", &net.TCPAddr{Port: 8001})
	if a == b || !strings.HasSuffix(a, "-8000") || host != "" && !strings.HasPrefix(a, host[:min(len(host), 10)]) {
		t.Errorf("from the host name %q: %q and %q", host, a, b)
	}
	if again := replicaName("", &net.TCPAddr{Port: 8000}); again != a {
		t.Errorf("not stable: %q then %q", a, again)
	}
}
