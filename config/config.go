// Package config holds mcp-gateway's configuration: built-in defaults, the
// YAML (or JSON) file, environment overrides and command-line flags, merged in
// that order of increasing precedence (CLI > ENV > YAML > defaults).
//
// Load is the only entry point; everything downstream receives a *Config by
// value and never reads the environment itself. The OpenAI API key is the one
// secret: it is read from the variable that openai.api_key_env names, kept in
// Config.APIKey, and never marshalled, logged or shown.
//
// A client's own file (Claude Desktop, Cursor, VS Code, Claude Code, ...) can
// be passed as it is; what the file may hold is in docs/configuration.md, and
// how it is decoded in docs/config-decoding.md.
package config

import (
	"cmp"
	"fmt"
	"time"
)

// Config is the effective configuration. The json tags name both the keys of
// the file and what --show-config prints (docs/config-decoding.md).
type Config struct {
	OpenAI        OpenAI             `json:"openai"`
	Request       Request            `json:"request"`
	ModelProfiles map[string]Profile `json:"model_profiles"`
	Policy        Policy             `json:"policy"`
	Search        Search             `json:"search"`
	Server        ServerOptions      `json:"server"`
	Gateway       Gateway            `json:"gateway"`
	// Servers are the backends from both the `servers:` list and the
	// `mcpServers:` map, in file order (list first, then the map sorted by
	// name), with defaults applied: Prefix resolved, Enabled and Restart set.
	Servers []Server `json:"servers"`

	// APIKey is the value of the variable OpenAI.APIKeyEnv names, or "".
	// It is never marshalled; --show-config prints only "set" or "unset".
	APIKey string `json:"-"`

	// shown maps a server's field whose value was expanded from ${VAR}
	// (key: name + "\x00" + field, e.g. "env.TOKEN") to the text as written,
	// so that WriteShowConfig never prints a variable's value.
	shown map[string]string
}

// OpenAI selects the Responses API endpoint and where the key comes from.
type OpenAI struct {
	APIKeyEnv string `json:"api_key_env"`
	BaseURL   string `json:"base_url"`
}

// Request bounds each Responses API call.
type Request struct {
	TimeoutMS  int `json:"timeout_ms"`  // per attempt
	MaxRetries int `json:"max_retries"` // total attempts = MaxRetries + 1
}

// Profile is one entry of model_profiles. An empty field means "inherit from
// the answer profile" (see Config.Profile).
type Profile struct {
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"` // low | medium | high | xhigh (also minimal, none)
	Verbosity       string `json:"verbosity,omitempty"`        // low | medium | high
}

// Policy controls citations and the system instructions.
type Policy struct {
	MaxCitations int          `json:"max_citations"` // 1..10
	System       SystemPolicy `json:"system"`
}

// SystemPolicy says where the Responses `instructions` come from.
type SystemPolicy struct {
	Source string `json:"source"` // builtin | file
	Path   string `json:"path"`   // used when Source is file; Load expands a leading "~/"
	Merge  string `json:"merge"`  // replace | prepend | append (file text relative to the builtin text)
}

// Search holds the defaults for the answer tools' search hints.
type Search struct {
	Defaults SearchDefaults `json:"defaults"`
}

// SearchDefaults apply when a call does not pass its own values.
type SearchDefaults struct {
	RecencyDays int      `json:"recency_days"`
	MaxResults  int      `json:"max_results"`
	Domains     []string `json:"domains"`
}

// ServerOptions are the gateway process's own switches (the section is named
// `server:` for compatibility with openai-responses-mcp).
type ServerOptions struct {
	Debug             bool   `json:"debug"`
	DebugFile         string `json:"debug_file"` // "" means none
	ShowConfigOnStart bool   `json:"show_config_on_start"`
}

// Gateway configures the front end and the backend supervisor.
type Gateway struct {
	Separator   string `json:"separator"`
	StrictNames string `json:"strict_names"` // auto | true | false
	// EntryName is the name the clients' configurations give the
	// gateway's entry (import --replace-client writes "gateway"). Claude
	// Code shows a tool as mcp__ENTRY__NAME and needs that within 64
	// characters, so under strict_names: auto its names leave room for it.
	EntryName string `json:"entry_name"`
	// ToolsMode is what tools/list holds: every tool (full), the meta
	// tools that find and call them (lazy), or per client (auto): lazy
	// for a client that takes fewer tools than there are, else full.
	ToolsMode string `json:"tools_mode"` // auto | full | lazy
	// Profile is the profile (one of Profiles) that stdio, tools, call
	// and the HTTP paths without /p/NAME serve; "" serves every tool.
	Profile string `json:"profile"`
	// Profiles are named tool sets, each served on its own HTTP paths
	// (/p/NAME/mcp) and chosen on stdio with --profile.
	Profiles         []ToolProfile `json:"profiles"`
	DefaultTimeoutMS int           `json:"default_timeout_ms"`
	StartupTimeoutMS int           `json:"startup_timeout_ms"`
	// StartLimitMS bounds a backend's start (process, initialize and first
	// lists); past startup_timeout_ms it keeps starting in the background.
	StartLimitMS int `json:"start_limit_ms"`
	// FirstStartWaitMS is how long a client's initialize and first lists
	// wait for a backend never seen before (one without a snapshot); the
	// others are answered for at once from their snapshots.
	FirstStartWaitMS int `json:"first_start_wait_ms"`
	// Snapshots keeps what each backend looked like when last ready in the
	// user's cache directory (SnapshotDir), to answer clients from while
	// it starts.
	Snapshots   bool `json:"snapshots"`
	AnswerTools bool `json:"answer_tools"`
	HTTP        HTTP `json:"http"`
	// Policy decides per identity which servers, tools, prompts and
	// resources an HTTP client sees and may call (docs/teams.md).
	Policy AccessPolicy `json:"policy"`
	// RateLimits bound each identity's requests and calls over HTTP.
	RateLimits RateLimits `json:"rate_limits"`
	// LineMode forces line-delimited replies on stdio (MCP_LINE_MODE=1).
	LineMode bool `json:"line_mode"`

	// Trust is the policy for the backends' tool and prompt definitions
	// (docs/trust.md): pin (the first definition seen is recorded and
	// trusted, a later change is withheld until approved), approve (new
	// definitions wait for approval too) or off. A server's own trust
	// overrides it.
	Trust string `json:"trust"`
	// Pins is the file the approved definitions are kept in; "" means
	// beside the configuration file (PinsFile).
	Pins string `json:"pins"`
	// Redact is what the gateway masks secrets in before a client sees
	// it: off, or results (tool results, prompts, resource contents, task
	// results, progress and log messages).
	// Logs and the audit log are always masked.
	Redact string `json:"redact"`
	// Confirm is off, or destructive: a call to a tool whose annotations
	// say destructiveHint asks the user through elicitation first.
	Confirm string `json:"confirm"`
	// Audit configures the audit log of tool calls.
	Audit Audit `json:"audit"`
	// Sandbox is the confinement of every local server without its own
	// sandbox keys (docs/sandbox.md); off by default.
	Sandbox Sandbox `json:"sandbox"`
	// Registry is the MCP registry search and add read (docs/registry.md).
	Registry Registry `json:"registry"`
}

// Audit configures the audit log: one JSON line per tool call.
type Audit struct {
	// Path is the log file; "" keeps none. Load expands a leading "~/".
	Path string `json:"path"`
	// Arguments records each call's arguments (secrets masked); without
	// it only their digest is.
	Arguments bool `json:"arguments"`
	// MaxBytes is the size at which the file is rotated (PATH.1, ...).
	MaxBytes int `json:"max_bytes"`
	// Keep is how many rotated files are kept.
	Keep int `json:"keep"`
}

// HTTP configures `--transport http`.
type HTTP struct {
	Listen         string   `json:"listen"`
	AllowedOrigins []string `json:"allowed_origins"`
	// Auth says how HTTP clients authenticate: "none", "token" (the
	// bearer token auth_token_env names) or "oauth" (access tokens of the
	// issuers in OAuth). "" means token when auth_token_env is set, else
	// none.
	Auth         string `json:"auth"`
	AuthTokenEnv string `json:"auth_token_env"`
	// OAuth makes the HTTP front an OAuth 2.1 resource server (auth:
	// oauth).
	OAuth ResourceServer `json:"oauth"`
	// StateKeyEnv names the variable holding the key that seals the
	// requestState of calls held for input (2026-07-28) and the session
	// ids of the handshake era, so that any replica serves a session: the
	// replicas behind one load balancer share it. Several keys separated
	// by commas rotate it: the first seals, each opens. "" means a key of
	// each process's own, and sessions each process's own.
	StateKeyEnv string `json:"state_key_env"`
	// Replica names this process among the replicas, in the sealed
	// session ids it issues and the Mcp-Gateway-Replica header (a
	// balancer routes on it); "" means the host name and the port the
	// front listens on.
	Replica   string `json:"replica"`
	Stateless bool   `json:"stateless"`
	// SessionIdleTimeoutMS ends a Streamable HTTP session that has had no
	// request, no call in flight and no open stream for this long; 0 never
	// ends one.
	SessionIdleTimeoutMS int `json:"session_idle_timeout_ms"`
	// SessionBufferBytes bounds the messages waiting for one HTTP
	// session's client to read them; a session whose client falls further
	// behind is ended.
	SessionBufferBytes int `json:"session_buffer_bytes"`
	// MaxSessions bounds the sessions open at once (Streamable HTTP and
	// /sse alike); one more is refused with 503.
	MaxSessions int `json:"max_sessions"`
	// MaxSessionsPerIdentity bounds the sessions one caller holds (its
	// OAuth identity; without authentication or with the shared token,
	// its address, an IPv6 /64), so that one caller cannot take them all;
	// 0 means half of MaxSessions.
	MaxSessionsPerIdentity int `json:"max_sessions_per_identity"`
	// MaxStreams bounds the event streams open at once (GET /mcp and GET
	// /sse); one more is refused with 503.
	MaxStreams int `json:"max_streams"`
	// MaxConnections bounds the HTTP connections open at once; 0 derives
	// it from the open-file limit, keeping descriptors for the backends.
	MaxConnections int `json:"max_connections"`
	// MaxConnectionsPerSource bounds the HTTP connections open at once
	// from one client address; 0 means half of the connection limit.
	MaxConnectionsPerSource int `json:"max_connections_per_source"`
}

// ResourceServer configures the HTTP front as an OAuth 2.1 resource server
// (gateway.http.auth: oauth, docs/teams.md).
type ResourceServer struct {
	// Resource is the gateway's resource identifier: the URL clients
	// reach /mcp at (https://gw.example.com/mcp). An access token must name
	// it in its audience.
	Resource string `json:"resource"`
	// Issuers are the authorization servers whose tokens are accepted.
	Issuers []Issuer `json:"issuers"`
	// Scopes are required of every request; ToolScopes more of calls to
	// some tools. A token without them gets 403 insufficient_scope.
	Scopes     []string    `json:"scopes"`
	ToolScopes []ToolScope `json:"tool_scopes"`
}

// Issuer is one authorization server whose access tokens the gateway
// accepts.
type Issuer struct {
	// Issuer is its issuer identifier, exactly as its tokens' iss claim
	// and its metadata name it.
	Issuer string `json:"issuer"`
	// JWKSURL is where its signing keys are; "" means the jwks_uri of
	// its metadata (ISSUER/.well-known/openid-configuration, else
	// oauth-authorization-server).
	JWKSURL string `json:"jwks_url,omitempty"`
	// Audiences are accepted in a token's aud besides the resource (an
	// authorization server that names APIs its own way).
	Audiences []string `json:"audiences,omitempty"`
	// IntrospectionURL, when set, checks tokens that are not JWTs (opaque
	// tokens) by RFC 7662 introspection, as ClientID with the secret in
	// the variable ClientSecretEnv names.
	IntrospectionURL string `json:"introspection_url,omitempty"`
	ClientID         string `json:"client_id,omitempty"`
	ClientSecretEnv  string `json:"client_secret_env,omitempty"`
}

// ToolScope requires Scopes of the calls to the tools that Tools match
// (SERVER.TOOL patterns, as in the policy).
type ToolScope struct {
	Tools  []string `json:"tools"`
	Scopes []string `json:"scopes"`
}

// AccessPolicy is the per-identity policy of the HTTP front. With no rules
// every caller sees everything; with rules, a caller sees what a rule that
// applies to it allows and none that applies denies.
type AccessPolicy struct {
	Rules []PolicyRule `json:"rules"`
	// Admin is a CEL condition over the caller's identity, as a rule's
	// When: a caller of the HTTP front for whom it holds may use the trust
	// dashboard (/ and /approve) under auth: oauth. Without it nobody may
	// there; a shared token's holder (auth: token) always may.
	Admin string `json:"admin,omitempty"`
}

// PolicyRule is one rule of the policy: When, a CEL expression over the
// caller's identity (subject, issuer, client_id, scopes, groups, claims),
// says whether it applies; Allow and Deny are patterns: SERVER (all of a
// server's tools, prompts and resources) or SERVER.NAME (its tools and
// prompts), with * matching any run of characters.
type PolicyRule struct {
	Name  string   `json:"name,omitempty"`
	When  string   `json:"when"`
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// ToolProfile is a named tool set: the servers, tools and prompts that
// Include's patterns name (every one when it is empty) and none of
// Exclude's, as SERVER or SERVER.NAME patterns with * (the policy's).
type ToolProfile struct {
	Name    string   `json:"name"`
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// RateLimits are token buckets: each identity's requests, and each
// identity's calls of some tools. Zero PerMinute means no limit.
type RateLimits struct {
	Identity Rate       `json:"identity"`
	Tools    []ToolRate `json:"tools"`
}

// Rate is a token bucket: PerMinute tokens a minute, at most Burst at
// once (0: PerMinute/60, at least 1).
type Rate struct {
	PerMinute int `json:"per_minute"`
	Burst     int `json:"burst"`
}

// ToolRate limits each identity's calls of each tool Tools match.
type ToolRate struct {
	Tools []string `json:"tools"`
	Rate
}

// Server is one backend MCP server. Exactly one of Command and URL is set.
type Server struct {
	Name    string   `json:"name"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is ${VAR}-expanded from the gateway's environment. A file may
	// also write it `envs`, as some gateways do.
	Env map[string]string `json:"env,omitempty" alias:"envs"`
	Cwd string            `json:"cwd,omitempty"`
	// URL may also be written `serverUrl` (Windsurf) or `httpUrl` (Gemini CLI).
	URL string `json:"url,omitempty" alias:"serverUrl,httpUrl"`
	// Transport is the `type` the entry declared, normalized: "stdio",
	// "http" (also written streamable-http or streamableHttp) or "sse";
	// "" when not given (command means stdio; url means Streamable HTTP,
	// falling back to SSE).
	Transport string            `json:"type,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"` // ${VAR} already expanded
	// TimeoutMS is the per-call timeout; 0 means Gateway.DefaultTimeoutMS.
	// A file may also write it `timeout` (in milliseconds too).
	TimeoutMS int  `json:"timeout_ms,omitempty" alias:"timeout"`
	Enabled   bool `json:"enabled"`
	// Prefix is what the gateway puts before the separator; it defaults to
	// Name, and "" exposes the backend's own names unprefixed.
	Prefix  string     `json:"prefix"`
	Tools   ToolFilter `json:"tools"`
	Restart string     `json:"restart"` // on-failure | never
	// Protocol says which protocol era to speak to the server: "auto"
	// (the default) is the newest it offers — over stdio, the era the
	// client speaks —; "2025-11-25" is the initialize handshake always
	// (for a server whose tools ask the client by requests, which a
	// 2026-07-28 session refuses); "2026-07-28" is the newest, whatever
	// the client speaks.
	Protocol string `json:"protocol,omitempty"`
	// InheritEnv passes the gateway's whole environment to the server (the
	// behaviour before the allowlist); false gives it only the allowlist of
	// docs/configuration.md ("The environment of a server") plus Env.
	InheritEnv bool `json:"inherit_env,omitempty"`
	// Trust overrides gateway.trust for this server: pin, approve or off.
	// "" inherits it (a Gemini CLI `trust: true` is ignored with a
	// warning).
	Trust string `json:"trust,omitempty"`
	// OAuth configures how a remote server's OAuth sign-in registers the
	// gateway (mcp-gateway login); without it the gateway registers itself
	// dynamically where the authorization server allows. Cursor writes it
	// `auth`.
	OAuth OAuth `json:"oauth,omitzero" alias:"auth"`
	// Sandbox confines a local server (docs/sandbox.md); after Load it is
	// the effective confinement, its own keys over gateway.sandbox's, and
	// zero when it is off.
	Sandbox Sandbox `json:"sandbox,omitzero"`
	// UpstreamAuth, on a remote server, makes the gateway reach it with
	// each caller's own credential instead of one shared (docs/teams.md,
	// "Each person's own credentials upstream"); zero: the shared one.
	UpstreamAuth UpstreamAuth `json:"upstream_auth,omitzero"`
	// From records where the entry came from: "registry NAME@VERSION"
	// for one `mcp-gateway add` wrote (docs/registry.md).
	From string `json:"from,omitempty"`
	// FileSHA256 is the SHA-256 of the package file as its registry entry
	// gives it (fileSha256), hex: provenance.
	FileSHA256 string `json:"file_sha256,omitempty"`

	// Source locates the server's entry in the file, for error messages
	// ("config.yaml:12"); empty for servers not from a file.
	Source string `json:"-"`

	// secrets are the secret references (${secret:NAME}) of Env, Headers
	// and Args, which hold them as written until WithSecrets puts the
	// values in (secretref.go); nil when there are none.
	secrets *secretRefs
}

// OAuth is a remote server's sign-in client: a client registered in
// advance with the authorization server (ClientID, and ClientSecret for a
// confidential client), or the HTTPS URL of the gateway's client ID
// metadata document, and the scopes to ask for when the server names none.
type OAuth struct {
	// ClientID, ClientSecret and RedirectURI may also be written clientId,
	// clientSecret and redirectUri (Gemini CLI, Claude Code), and the first
	// two CLIENT_ID and CLIENT_SECRET (Cursor).
	ClientID          string   `json:"client_id,omitempty" alias:"clientId,CLIENT_ID"`
	ClientSecret      string   `json:"client_secret,omitempty" alias:"clientSecret,CLIENT_SECRET"` // ${VAR} expanded; masked in --show-config
	ClientMetadataURL string   `json:"client_metadata_url,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	// RedirectURI is the exact redirect URI a pre-registered client was
	// registered with: an http URL on a loopback host with a port, where
	// `mcp-gateway login` listens. Empty: a free loopback port is used.
	RedirectURI string `json:"redirect_uri,omitempty" alias:"redirectUri"`
	// CallbackPort is Claude Code's way of writing RedirectURI
	// (CallbackRedirectURI); Load turns one into the other and leaves it 0.
	CallbackPort int `json:"callback_port,omitempty" alias:"callbackPort"`
}

// The modes of upstream_auth.
const (
	UpstreamTokenExchange = "token_exchange" // RFC 8693
	UpstreamJWTBearer     = "jwt_bearer"     // RFC 7523
	UpstreamPassthrough   = "passthrough"
	UpstreamPerUserLogin  = "per_user_login"
)

// UpstreamAuth is how a remote server is reached per caller: with a token
// the caller's own is exchanged for (token_exchange, jwt_bearer), with the
// caller's token itself when it is meant for the server (passthrough), or
// with each person's own sign-in to the server (per_user_login, which uses
// the server's oauth block). The client keys are named as the HTTP front's
// introspection client's (gateway.http.oauth.issuers[]).
type UpstreamAuth struct {
	Mode string `json:"mode"`
	// TokenURL is the authorization server's token endpoint, where the
	// caller's token is exchanged (token_exchange, jwt_bearer).
	TokenURL string `json:"token_url,omitempty"`
	// Audience and Resource name the server the token is wanted for
	// (RFC 8693's audience and resource, RFC 8707); Scopes are asked for.
	// For passthrough, Audience is what the caller's token must be meant
	// for (its aud); "" means the server's URL.
	Audience string   `json:"audience,omitempty"`
	Resource string   `json:"resource,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	// ClientID is the gateway's client at TokenURL; it authenticates with
	// the secret in the variable ClientSecretEnv (client_secret_basic), or
	// with a JWT signed by the private key in ClientKeyFile (PEM, RSA or
	// EC: private_key_jwt, RFC 7523 section 2.2), whose key id is
	// ClientKeyID; with neither it is a public client.
	ClientID        string `json:"client_id,omitempty"`
	ClientSecretEnv string `json:"client_secret_env,omitempty"`
	ClientKeyFile   string `json:"client_key_file,omitempty"`
	ClientKeyID     string `json:"client_key_id,omitempty"`
	// SubjectTokenType is what the caller's bearer token is, as sent to
	// TokenURL: access_token (the default) or id_token (a client that
	// presents its ID token to the gateway).
	SubjectTokenType string `json:"subject_token_type,omitempty"`
}

// CallbackRedirectURI is the redirect URI Claude Code registers a client
// with when its oauth names a callbackPort.
func CallbackRedirectURI(port int) string {
	return fmt.Sprintf("http://localhost:%d/callback", port)
}

// OAuthForeignKeys are the keys of other clients' oauth objects that the
// gateway does without, each with the reason: it discovers the endpoints
// itself and signs in whenever a server asks.
func OAuthForeignKeys() map[string]string {
	const gemini = "a Gemini CLI setting; the gateway discovers the endpoints"
	return map[string]string{
		"enabled": gemini, "authorizationUrl": gemini, "tokenUrl": gemini, "tokenParamName": gemini, "audiences": gemini,
		"authServerMetadataUrl": "a Claude Code setting; the gateway discovers the authorization server",
	}
}

func (*OAuth) foreignKeys() map[string]string { return OAuthForeignKeys() }

// ToolFilter selects a backend's tools by glob patterns (path.Match syntax)
// on the backend's own names. An empty Include means all; Exclude wins.
type ToolFilter struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// Profile names of the answer tools.
const (
	ProfileAnswer         = "answer"
	ProfileAnswerDetailed = "answer_detailed"
	ProfileAnswerQuick    = "answer_quick"
)

// Profile returns the effective profile for the named tool: the tool's own
// model_profiles entry with every empty field taken from the answer profile.
func (c *Config) Profile(name string) Profile {
	base := c.ModelProfiles[ProfileAnswer]
	p, ok := c.ModelProfiles[name]
	if !ok {
		return base
	}
	return Profile{
		Model:           cmp.Or(p.Model, base.Model),
		ReasoningEffort: cmp.Or(p.ReasoningEffort, base.ReasoningEffort),
		Verbosity:       cmp.Or(p.Verbosity, base.Verbosity),
	}
}

// TrustOf is the trust policy of server s: its own, else gateway.trust.
func (c *Config) TrustOf(s Server) string {
	return cmp.Or(s.Trust, c.Gateway.Trust)
}

// The defaults of the gateway's timeouts, shared with backends.Options
// (whose zero fields mean these).
const (
	DefaultCallTimeout    = 30 * time.Second // gateway.default_timeout_ms
	DefaultStartupTimeout = 30 * time.Second // gateway.startup_timeout_ms
	DefaultStartLimit     = 10 * time.Minute // gateway.start_limit_ms
	DefaultFirstStartWait = 1500 * time.Millisecond
)

// The defaults of gateway.http's limits (docs/http.md, "Limits"): far
// beyond what a laptop's few clients open, and a bound on what a server's
// many clients (or one misbehaving client) can make the gateway hold, about
// 30 MB of sessions and 70 MB of streams.
const (
	DefaultMaxSessions = 1000
	DefaultMaxStreams  = 1000
)

// DefaultTimeout is the per-call timeout of a backend without its own
// timeout_ms (gateway.default_timeout_ms, which DEFAULT_TIMEOUT overrides).
func (c *Config) DefaultTimeout() time.Duration {
	return time.Duration(c.Gateway.DefaultTimeoutMS) * time.Millisecond
}

// CallTimeout is the per-call timeout for server s: its own timeout_ms,
// else def, else DefaultCallTimeout.
func CallTimeout(s Server, def time.Duration) time.Duration {
	switch {
	case s.TimeoutMS > 0:
		return time.Duration(s.TimeoutMS) * time.Millisecond
	case def > 0:
		return def
	}
	return DefaultCallTimeout
}

// ms is a duration in whole milliseconds, as the file writes it.
func ms(d time.Duration) int { return int(d / time.Millisecond) }

// StartupTimeout bounds how long tools/list waits for backends to settle.
func (c *Config) StartupTimeout() time.Duration {
	return time.Duration(c.Gateway.StartupTimeoutMS) * time.Millisecond
}

// FirstStartWait bounds how long initialize and the first lists wait for
// a backend never seen before.
func (c *Config) FirstStartWait() time.Duration {
	return time.Duration(c.Gateway.FirstStartWaitMS) * time.Millisecond
}

// SessionIdleTimeout is how long an idle HTTP session lives; 0 means for
// ever.
func (c *Config) SessionIdleTimeout() time.Duration {
	return time.Duration(c.Gateway.HTTP.SessionIdleTimeoutMS) * time.Millisecond
}

// StartLimit bounds one start of a backend; a slower one is stopped and,
// under restart: on-failure, tried again.
func (c *Config) StartLimit() time.Duration {
	return time.Duration(c.Gateway.StartLimitMS) * time.Millisecond
}

// Defaults returns the built-in configuration (docs/configuration.md).
func Defaults() *Config {
	return &Config{
		OpenAI:  OpenAI{APIKeyEnv: "OPENAI_API_KEY", BaseURL: "https://api.openai.com/v1"},
		Request: Request{TimeoutMS: 300000, MaxRetries: 3},
		ModelProfiles: map[string]Profile{
			ProfileAnswer:         {Model: "gpt-5.5", ReasoningEffort: "medium", Verbosity: "medium"},
			ProfileAnswerDetailed: {ReasoningEffort: "high"},
			ProfileAnswerQuick:    {ReasoningEffort: "low", Verbosity: "low"},
		},
		Policy: Policy{
			MaxCitations: 3,
			System:       SystemPolicy{Source: "builtin", Path: "~/.config/mcp-gateway/policy.md", Merge: "replace"},
		},
		Search: Search{Defaults: SearchDefaults{RecencyDays: 60, MaxResults: 5, Domains: []string{}}},
		Gateway: Gateway{
			Separator:        ".",
			StrictNames:      "auto",
			EntryName:        "gateway",
			ToolsMode:        "auto",
			Profiles:         []ToolProfile{},
			DefaultTimeoutMS: ms(DefaultCallTimeout),
			StartupTimeoutMS: ms(DefaultStartupTimeout),
			StartLimitMS:     ms(DefaultStartLimit),
			FirstStartWaitMS: ms(DefaultFirstStartWait),
			Snapshots:        true,
			AnswerTools:      true,
			HTTP: HTTP{Listen: "127.0.0.1:8000", AllowedOrigins: []string{}, SessionIdleTimeoutMS: 1800000, SessionBufferBytes: 16 << 20,
				MaxSessions: DefaultMaxSessions, MaxStreams: DefaultMaxStreams,
				OAuth: ResourceServer{Issuers: []Issuer{}, Scopes: []string{}, ToolScopes: []ToolScope{}}},
			Policy:     AccessPolicy{Rules: []PolicyRule{}},
			RateLimits: RateLimits{Tools: []ToolRate{}},
			Trust:      "pin",
			Redact:     "off",
			Confirm:    "off",
			Audit:      Audit{MaxBytes: 10 << 20, Keep: 3},
			Sandbox:    Sandbox{Mode: SandboxOff},
			Registry:   Registry{URL: DefaultRegistryURL, TimeoutMS: 15000},
		},
		Servers: []Server{},
	}
}
