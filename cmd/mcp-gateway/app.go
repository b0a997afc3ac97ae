package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"

	"github.com/mcp-gateway/mcp-gateway/answer"
	"github.com/mcp-gateway/mcp-gateway/backends"
	"github.com/mcp-gateway/mcp-gateway/config"
	"github.com/mcp-gateway/mcp-gateway/config/policy"
	"github.com/mcp-gateway/mcp-gateway/config/secrets"
	"github.com/mcp-gateway/mcp-gateway/gateway"
	"github.com/mcp-gateway/mcp-gateway/gateway/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// app is one run of the command: the configuration and the parts wired from
// it. It owns the backends and the log file.
type app struct {
	inv      *invocation
	env      env
	load     config.LoadOptions // how cfg was loaded; a reload loads the same way
	self     config.Self
	cfg      *config.Config
	sources  *config.Sources
	logs     *logSetup
	log      *slog.Logger
	backends *backends.Manager
	gw       *gateway.Gateway
	metrics  *metrics          // --transport http only
	audit    *audit.Log        // the audit log, when gateway.audit.path is set
	policy   *policy.Policy    // gateway.policy, for serve-http and policy check
	admin    *policy.Condition // gateway.policy.admin, for serve-http's dashboard
	tel      *telemetry        // OpenTelemetry, when the environment asks for it (serve, serve-http)
	tokenDir string            // remote servers' sign-ins (login, logout)
	// userLogins are the per-caller sign-ins of per_user_login servers
	// (serve-http with auth: oauth); nil otherwise.
	userLogins *backends.UserLogins
}

// newApp loads the configuration and wires the gateway. It starts nothing.
// Its errors are configuration errors (exit 2).
func newApp(inv *invocation, e env) (_ *app, err error) {
	home, _ := os.UserHomeDir()
	load := config.LoadOptions{
		Path:  inv.configPath,
		Home:  home,
		Env:   e.lookup,
		Flags: config.Flags{Debug: inv.debug, DebugFile: inv.debugFile, Listen: inv.listen, Profile: inv.profile},
	}
	cfg, sources, err := config.Load(load)
	if err != nil {
		return nil, err
	}
	logs, err := newLogger(e.stderr, e.lookup, cfg.Server.Debug, cfg.Server.DebugFile)
	if err != nil {
		return nil, err
	}
	a := &app{inv: inv, env: e, load: load, cfg: cfg, sources: sources, logs: logs, log: logs.logger, tokenDir: config.TokenDir(home)}
	defer func() {
		if err != nil { // what was opened so far is closed
			if a.audit != nil {
				a.audit.Close()
			}
			logs.close()
		}
	}()
	a.self = config.NewSelf(inv.configPath, home, e.lookup)
	servers := a.servers(cfg)
	for _, w := range sources.Warnings {
		a.log.Warn("config warning", "warning", w)
	}

	var answers *answer.Service
	if cfg.Gateway.AnswerTools {
		answers = answer.New(answer.Options{
			Config:     cfg,
			Logger:     a.log.With("component", "answer"),
			Debug:      cfg.Server.Debug,
			HTTPClient: http.DefaultClient,
		})
	}
	var snapshots string
	if cfg.Gateway.Snapshots {
		snapshots = config.SnapshotDir(home, runtime.GOOS, e.lookup)
	}
	var reaper, sandbox []string
	if exe, err := os.Executable(); err == nil {
		reaper = []string{exe, reaperArg}
		sandbox = []string{exe, backends.SandboxArg}
	}
	sandboxDir := config.SandboxDir(home, runtime.GOOS, e.lookup)
	// No sandbox grants the gateway's own files (docs/sandbox.md).
	protected := []string{config.PinsFile(cfg, sources, home), a.tokenDir, snapshots, cfg.Gateway.Audit.Path, cfg.Server.DebugFile, sandboxDir, config.DefaultPath(home)}
	if sources.YAML != nil {
		protected = append(protected, *sources.YAML)
	}
	secretOpts := secretOptions(home, e.lookup)
	protected = append(protected, secretOpts.KeyFile)
	protected = append(protected, secrets.Files(secretOpts.Dir)...)
	if ac := cfg.Gateway.Audit; ac.Path != "" && inv.command != "show-config" {
		if a.audit, err = audit.Open(audit.Options{Path: ac.Path, MaxBytes: int64(ac.MaxBytes), Keep: ac.Keep, Logger: a.log}); err != nil {
			return nil, err
		}
	}
	var stateKey []byte
	if inv.command == "serve-http" {
		if name := cfg.Gateway.HTTP.StateKeyEnv; name != "" {
			key, _ := e.lookup(name)
			if key = strings.TrimSpace(key); key == "" {
				return nil, usagef("gateway.http.state_key_env names %s, which is not set", name)
			}
			stateKey = []byte(key)
			a.warnWeakStateKey(name, key)
		}
		a.userLogins = a.newUserLogins(stateKey)
	}
	servers = a.approveServers(servers)
	a.backends = backends.New(backends.Options{
		Servers:        servers,
		Logger:         a.log.With("component", "backends"),
		DefaultTimeout: cfg.DefaultTimeout(),
		StartupTimeout: cfg.StartupTimeout(),
		StartLimit:     cfg.StartLimit(),
		ClientInfo:     &mcp.Implementation{Name: "mcp-gateway", Version: version()},
		Reaper:         reaper,
		Subreaper:      e.subreaper,
		Sandbox:        sandbox,
		SandboxDir:     sandboxDir,
		Protected:      protected,
		Self:           &a.self,
		TokenDir:       a.tokenDir,
		UserLogins:     a.userLogins,
		// Read as each server starts, from the store as it is then
		// (docs/secrets.md).
		Secret:      func(name string) (string, error) { return secrets.Lookup(secretOpts, name) },
		SnapshotDir: snapshots,
		Trust: backends.TrustOptions{
			Policy:  cfg.Gateway.Trust,
			PinFile: config.PinsFile(cfg, sources, home),
			// A gateway that runs on shows what mcp-gateway approve or the
			// dashboard of another process approved, at once.
			Watch: inv.command == "serve" || inv.command == "serve-http" || inv.command == "dashboard",
		},
		// The stdio gateway has one client: its backends are declared that
		// client's own capabilities (docs/transparency.md).
		AwaitClient: inv.command == "serve",
	})
	var observe []func(gateway.CallRecord)
	if inv.command == "serve-http" || inv.command == "policy-check" {
		if a.policy, err = compilePolicy(cfg); err != nil {
			return nil, err
		}
	}
	if inv.command == "serve-http" {
		if a.admin, err = policy.CompileCondition(cfg.Gateway.Policy.Admin); err != nil {
			return nil, fmt.Errorf("gateway.policy.admin: %w", err)
		}
	}
	if inv.command == "serve" || inv.command == "serve-http" {
		if a.tel, err = newTelemetry(context.Background(), e.lookup, a.log); err != nil {
			return nil, err
		}
		if a.tel != nil && a.tel.duration != nil {
			observe = append(observe, a.tel.observe)
		}
	}
	if inv.command == "serve-http" {
		a.metrics = newMetrics(a.backends)
		observe = append(observe, a.metrics.observe)
	}
	var auditCall func(gateway.CallRecord) error
	if a.audit != nil {
		auditCall = a.recordCall
	}
	var onCall func(gateway.CallRecord)
	switch len(observe) {
	case 0:
	case 1:
		onCall = observe[0]
	default:
		onCall = func(r gateway.CallRecord) {
			for _, o := range observe {
				o(r)
			}
		}
	}
	a.gw = gateway.New(gateway.Options{
		Config:   cfg,
		Logger:   a.log,
		Answer:   answers,
		Backends: a.backends,
		Version:  version(),
		OnCall:   onCall,
		Audit:    auditCall,
		StateKey: stateKey,
		Policy:   a.policy,
		OnDeny:   a.denied,
		OnLimited: func(limit, server string) {
			if a.metrics != nil {
				a.metrics.limited.WithLabelValues(limit, server).Inc()
			}
			if a.tel != nil {
				a.tel.rateLimited(limit, server)
			}
		},
		Tracer: a.tel.tracer(),
	})
	return a, nil
}

// servers are the backends of cfg that this gateway runs: none when it
// would be a recursion (run refuses; nothing is started or matched).
func (a *app) servers(cfg *config.Config) []config.Server {
	if a.self.Recursive() {
		return nil
	}
	return cfg.Servers
}

// close stops the backends (no child outlives the gateway) and closes the
// debug file.
func (a *app) close() {
	if err := a.tel.shutdown(); err != nil {
		a.log.Warn("OpenTelemetry: exporting the last traces and metrics", "err", err)
	}
	if err := a.backends.Close(); err != nil {
		a.log.Warn("stopping backends", "err", err)
	}
	if a.audit != nil {
		a.audit.Close()
	}
	a.logs.close()
}

func (a *app) run(ctx context.Context) error {
	if a.inv.showConfig || a.cfg.Server.ShowConfigOnStart {
		if err := config.WriteShowConfig(a.env.stderr, version(), a.cfg, a.sources); err != nil {
			return err
		}
	}
	if a.inv.command != "show-config" && a.self.Recursive() {
		return a.refuse(ctx)
	}
	switch a.inv.command {
	case "show-config":
		return nil
	case "serve":
		return a.serve(ctx)
	case "serve-http":
		return a.serveHTTP(ctx)
	case "tools":
		return a.tools(ctx)
	case "call":
		return a.call(ctx)
	case "status":
		return a.status(ctx)
	case "login":
		return a.login(ctx)
	case "logout":
		return a.logout(ctx)
	case "approve":
		return a.approve(ctx)
	case "dashboard":
		return a.serveDashboard(ctx)
	case "policy-check":
		return a.policyCheck()
	}
	return usagef("unknown command %q", a.inv.command)
}

// serve is `--stdio`: MCP on stdin/stdout until stdin ends or a signal.
func (a *app) serve(ctx context.Context) error {
	a.log.Info("mcp-gateway serving on stdio", "version", version(), "backends", len(a.cfg.Servers), "answer_tools", a.cfg.Gateway.AnswerTools)
	a.backends.Start(ctx)
	stopReload := a.startReload(ctx)
	stopStats := startRuntimeStats(a.log)
	err := a.gw.ServeStdio(ctx, a.env.stdin, a.env.stdout)
	stopStats()
	stopReload()
	a.log.Info("mcp-gateway shutting down", "reason", shutdownReason(ctx, err))
	return err
}

func shutdownReason(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		return "signal"
	case err != nil:
		return err.Error()
	}
	return "stdin closed"
}

// reportedError is a failure the command has already reported on its
// output (a failed `call`, every backend failed): exit 1, nothing more.
type reportedError struct{}

func (*reportedError) Error() string { return "failed (reported)" }

var errReported = &reportedError{}

// call is `mcp-gateway call NAME [JSON_ARGS]`.
func (a *app) call(ctx context.Context) error {
	args := json.RawMessage(strings.TrimSpace(a.inv.callArgs))
	if len(args) == 0 {
		args = json.RawMessage(`{}`) // parseArgs checked it is an object
	}
	// One call needs one server: when its snapshot names the tool, the
	// others are not started (nor waited for, nor stopped at exit).
	if server, ok := a.gw.SnapshotServer(a.inv.callName); ok {
		a.backends.Start(ctx, server)
	} else {
		a.backends.Start(ctx)
	}
	// The user typed this call: a destructive tool needs no confirmation.
	callCtx := gateway.WithConfirmed(gateway.WithClient(ctx, "mcp-gateway call"))
	// The call waits for its server while it starts (an npx download):
	// what that is doing is said meanwhile, as tools and status say it.
	called, shown := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(shown)
		a.newProgress("").showWhile(called)
	}()
	res, rpcErr := a.gw.Call(callCtx, a.inv.callName, args)
	close(called)
	<-shown
	if rpcErr != nil {
		writeJSON(a.env.stdout, map[string]any{"error": rpcErr})
		return errReported
	}
	// Numbers are printed exactly as received (json.Number).
	var pretty any
	dec := json.NewDecoder(strings.NewReader(string(res)))
	dec.UseNumber()
	if err := dec.Decode(&pretty); err != nil {
		return fmt.Errorf("decode result: %w", err)
	}
	if err := writeJSON(a.env.stdout, pretty); err != nil {
		return err
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &r) == nil && r.IsError {
		return errReported
	}
	return nil
}

// denied reports a request the policy refused (gateway.Options.OnDeny):
// in the audit log (event "deny"), the log, and counted in /metrics.
func (a *app) denied(d gateway.Denial) {
	var reason string
	switch {
	case d.Profile != "" && d.Pattern != "":
		reason = fmt.Sprintf("profile %q excludes it (%s)", d.Profile, d.Pattern)
	case d.Profile != "":
		reason = fmt.Sprintf("profile %q does not include it", d.Profile)
	case d.Rule != "":
		reason = fmt.Sprintf("policy: rule %q denies it (%s)", d.Rule, d.Pattern)
	default:
		reason = "policy: no rule that applies allows it"
	}
	if a.audit != nil {
		// The request is refused whether or not this is written.
		if err := a.audit.Record(audit.Entry{Time: d.Time, Event: "deny", Client: d.Client, Identity: d.Identity,
			Server: d.Server, Tool: d.Name, Own: d.Own, Kind: d.Kind, Reason: reason}); err != nil {
			a.log.Error("a denial's audit entry could not be written", "err", err)
		}
	}
	a.log.Info("request denied", "identity", d.Identity, "client", d.Client, "kind", d.Kind, "name", d.Name,
		"server", d.Server, "reason", reason)
	if a.metrics != nil {
		a.metrics.denials.WithLabelValues(d.Kind).Inc()
	}
	if a.tel != nil {
		a.tel.denied(d.Kind)
	}
}
