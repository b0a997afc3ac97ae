package main

import (
	"slices"
	"testing"

	"github.com/mcp-gateway/mcp-gateway/config"
)

// TestReloadSandboxIsLive: a change of gateway.sandbox is not one of the
// settings that need a restart: it reaches every server through its
// effective sandbox, and Apply restarts those it changes.
func TestReloadSandboxIsLive(t *testing.T) {
	running, next := config.Defaults(), config.Defaults()
	next.Gateway.Sandbox.Mode = config.SandboxBestEffort
	next.Gateway.Trust = "off"
	if got := staticChanges(running, next); !slices.Equal(got, []string{"gateway.trust"}) {
		t.Errorf("staticChanges = %v, want [gateway.trust]", got)
	}
}
