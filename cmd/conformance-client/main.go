// Command conformance-client is the client side of the official MCP
// conformance suite (@modelcontextprotocol/conformance, `conformance client
// --command ...`) built on mcp-gateway's own remote-backend code: it
// connects to the scenario's server exactly as a `url:` backend does (the
// same transport, handshake, forwarding and OAuth client of package
// backends), with a headless sign-in that follows the authorization
// server's redirect instead of a browser.
//
// Usage (as the suite runs it):
//
//	MCP_CONFORMANCE_SCENARIO=NAME [MCP_CONFORMANCE_CONTEXT=JSON] conformance-client URL
//
// It plays the scenarios go-sdk's conformance everything-client plays, with
// the same steps (scenarios.go): those of the 2025-11-25 suite, and those
// of 2026-07-28 (per-request _meta, the standard and Mcp-Param headers,
// input_required rounds, the authorization checks). It exits 0 when the
// scenario's steps succeeded, 1 otherwise; the suite judges the wire.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/backends/wire"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	server = "server"
	// redirectURL is where the suite's authorization server redirects.
	redirectURL = "http://localhost:3000/callback"
	// metadataURL is the client ID metadata document the suite serves.
	metadataURL = "https://conformance-test.local/client-metadata.json"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=NAME conformance-client URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-client:", err)
		os.Exit(1)
	}
}

// run plays one scenario against serverURL.
func run(ctx context.Context, name, serverURL, contextJSON string) error {
	play := scenarioFor(name)
	if play == nil {
		return fmt.Errorf("unknown scenario %q", name)
	}
	var sc suiteContext
	if contextJSON != "" {
		if err := json.Unmarshal([]byte(contextJSON), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "conformance-client-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := config.Server{
		Name: server, URL: serverURL, Enabled: true, Restart: "never",
		OAuth: config.OAuth{ClientMetadataURL: metadataURL, ClientID: sc.ClientID, ClientSecret: sc.ClientSecret},
	}
	m := backends.New(backends.Options{
		Servers:     []config.Server{s},
		Logger:      log,
		ClientInfo:  &mcp.Implementation{Name: "test-client", Version: "1.0.0"},
		AwaitClient: true, // declared below: what answer answers
		TokenDir:    dir,
		Authorize:   followRedirect,
		RedirectURL: redirectURL,
	})
	m.SetHooks(backends.Hooks{Request: answer})
	defer m.Close()
	m.Start(ctx)
	m.SetClientCapabilities(json.RawMessage(`{"roots":{},"elicitation":{}}`), wire.PerRequestEra)
	m.WaitServer(ctx, server)
	if st := m.Status()[0]; st.State != backends.Ready {
		return fmt.Errorf("connect: %s: %s", st.State, st.Error)
	}
	return play(ctx, &session{m: m, log: log, sc: sc})
}

// followRedirect is the headless sign-in: it opens the authorization URL
// without following its redirect, and reads the code, state and issuer
// from the redirect's Location (the suite's authorization server redirects
// at once, as a browser's user who already consented would be).
func followRedirect(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.String() == "" {
		return nil, errors.New("the authorization server did not redirect")
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
