package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// refuse is what a gateway does when it finds its own configuration in the
// chain of gateways above it (backends.ChainEnv): it was started by itself
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
	t := gateway.NewStdioTransport(a.env.stdin, a.env.stdout, gateway.StdioOptions{Logger: a.log})
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	data, _ := json.Marshal(map[string]any{"reason": "recursive_gateway", "config": a.self.Config, "chain": a.self.Chain})
	for {
		m, err := conn.Read(ctx)
		if err == io.EOF || ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		resp := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: backends.CodeRecursive, Message: msg, Data: data}}
		if err := conn.Write(ctx, resp); err != nil {
			return err
		}
		if req.Method == "initialize" {
			return nil
		}
	}
}
