package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// refuse is what a gateway does when it finds its own configuration in the
// chain of gateways above it (config.ChainEnv): it was started by itself
// through a wrapper (npx, a script, a copy of the binary). It starts no
// backend. Serving stdio, it answers every request with
// backends.CodeRecursive, so that the gateway above reports the entry as
// skipped, and ends after initialize; any other command fails.
func (a *app) refuse(ctx context.Context) error {
	msg := "this mcp-gateway (" + a.self.Config + ") already runs above: " + strings.Join(a.self.Chain, " -> ") +
		"; it starts nothing (see docs/clients.md)"
	a.log.Warn("a gateway entry led back to this gateway; not starting it again", "config", a.self.Config, "chain", strings.Join(a.self.Chain, " -> "))
	if a.inv.command != "serve" {
		return usagef("%s", msg)
	}
	data, _ := json.Marshal(map[string]any{"reason": "recursive_gateway", "config": a.self.Config, "chain": a.self.Chain})
	return gateway.RefuseStdio(ctx, a.env.stdin, a.env.stdout, &jsonrpc.Error{Code: backends.CodeRecursive, Message: msg, Data: data}, a.log)
}
