// Command testbackend is a scriptable MCP server for tests and benchmarks of
// mcp-gateway. It speaks line-delimited JSON-RPC on stdin/stdout by hand
// (not with go-sdk) so that it can emit exact bytes, misbehave on purpose,
// and report what it received.
//
// Build: go build -o $TMP/testbackend ./backends/testbackend
//
// With OTEL_EXPORTER_OTLP_ENDPOINT set it traces its tools/calls (trace.go).
//
// Flags (each may also be given as an environment variable
// TESTBACKEND_<FLAG>, upper case with '-' as '_', e.g. TESTBACKEND_PAGE_SIZE=2;
// a flag on the command line wins):
//
//	-name NAME            serverInfo.name (default "testbackend")
//	-start-delay D        sleep D (a Go duration) before reading stdin
//	-fail-start CODE      write a line to stderr and exit CODE before initialize
//	-banner N             write N non-JSON lines to stdout at start
//	-chatty-stdout        write a non-JSON line to stdout before every message
//	-stdout-text S        write S (not JSON) and a newline to stdout at start
//	-stderr-json S        write {"msg":S} (JSON, S escaped) to stderr at start
//	-refuse-level S       answer logging/setLevel with an error whose message is S
//	-stderr-lines N       write N lines to stderr at start
//	-stderr-text S        write S and a newline to stderr at start (escape
//	                      sequences, forged log records)
//	-describe S           append S to every tool's description
//	-say S                append S to the text of prompts/get's message, of
//	                      resources/read's contents and of each progress
//	                      message, and answer completion/complete with the
//	                      value "v"+S (what a backend may put a secret in)
//	-chatty-stderr N      write N lines to stderr per request received
//	-extra-tools N        add tools extra_000 .. extra_N-1 (echo-like)
//	-page-size N          page tools/list N tools at a time (0: all at once)
//	-instructions S       answer initialize with instructions S
//	-list-meta S          tools/list results carry "_meta":S (a JSON object)
//	-tasks                declare tasks; every tool may run as a task
//	                      (tasks.go)
//	-tasks-ext            the tasks extension of 2026-07-28 (tasksext.go):
//	                      answer server/discover (2026-07-28), declare
//	                      io.modelcontextprotocol/tasks, list the fixtures of
//	                      the conformance suite's tasks scenarios (greet,
//	                      slow_compute, failing_job, protocol_error_job,
//	                      confirm_delete, multi_input, test_tool_with_task)
//	-task-ids seq         with -tasks-ext: task ids task-1, task-2, ...
//	                      (guessable) instead of random ones
//	-http ADDR            serve Streamable HTTP of 2026-07-28 (no session) on
//	                      ADDR (POST /mcp) instead of stdin/stdout (http.go)
//	-http-audience AUD    with -http: take only bearer JWTs meant for AUD, and
//	                      add the tool whoami: the token's subject (bearer.go)
//	-subject-tool SUB=NAME with -http-audience (repeatable): the tool NAME is
//	                      listed to, and called by, the token's subject SUB
//	                      only; its result is the text "NAME for SUB"
//	-prompts              declare prompts; one prompt "greet"
//	-resources            declare resources; resource test://r1, template test://t/{id}
//	                      (with -http-audience also test://own/SUB, the token's
//	                      subject's own: a list that differs per caller)
//	                      (read: r1's contents, with an unknown member);
//	                      resources/subscribe is answered, then the URI is
//	                      reported updated (notifications/resources/updated)
//	-asks                 ask the client mid-request, by a request of its own
//	                      (asks.go): the prompt "ask" elicits a name and
//	                      greets it; reading test://sampled asks for a
//	                      sampling and answers its text
//	-app                  an MCP App (app.go): tools show (its _meta names the
//	                      UI resource ui://app/view.html) and poll (app-only),
//	                      that resource and the template ui://app/pages/{page},
//	                      whose HTML names the server; declares resources and
//	                      the io.modelcontextprotocol/ui extension;
//	                      completion/complete answers the URI its ref named
//	-env-digest           add the tool env_digest (name): text "sha256:HEX" of
//	                      the environment variable name's value, or "unset"
//	                      (a secret's arrival, never the secret itself)
//	-hostile              add the tools of a hostile server (hostile.go):
//	                      read_file (path), write_file (path, text) and
//	                      connect (addr, host:port; network tcp or udp), whose failures are the
//	                      OS's own errors (the sandbox tests); http_get (addr, a URL,
//	                      through $HTTP_PROXY) and connect_proxy (addr, host:port:
//	                      a CONNECT tunnel through $HTTPS_PROXY, then GET /);
//	                      fork (max: start up to max sleeping children, stop
//	                      at the first the OS refuses, end them, answer how
//	                      many and the error) and alloc (mb: allocate and
//	                      touch mb MB) (limits.go)
//	-app-gated            -app, but the app's tools are listed only to a client
//	                      whose initialize declared the extension (as a server
//	                      with a text-only fallback does)
//	-ignore-term          ignore SIGTERM and stdin EOF (only SIGKILL ends it)
//	-grandchild           start a grandchild ("sleep 300") in its process group;
//	                      its pid is written to stderr as "grandchild pid N"
//	-escape               start a grandchild ("sleep 300") in a new session
//	                      (setsid, Unix only) that holds our stdout and
//	                      stderr; its pid is written to stderr as
//	                      "escapee pid N"
//	-list-changed-on-init send notifications/tools/list_changed right after
//	                      notifications/initialized
//	-ignore-cancel        slow answers even when cancelled (a late response)
//	-string-ids           echo numeric request ids back as strings ("5" for 5)
//	-tools-file PATH      definitions read at every tools/list and prompts/list:
//	                      {"tools":{NAME:{"description","title","inputSchema",
//	                      "annotations","result"}}, "prompts":{NAME:{...}}};
//	                      a built-in tool's members are replaced, any other
//	                      tool is added (answering its "result", else as
//	                      echo); with it the tool relist is listed too
//	                      (a server that redefines its tools: trust tests)
//	-exit-file PATH       when stdin ends, write "eof" to PATH before exiting;
//	                      on SIGTERM write "term" and exit 0 (a stateful
//	                      server saving its data: tests check the gateway
//	                      stopped it gracefully, not by SIGKILL)
//	-pid-dir DIR          create the empty file DIR/<pid> at start (tests
//	                      count how many times a backend was started)
//	-start-barrier N      with -pid-dir: before reading stdin, wait until DIR
//	                      holds N files (N backends started at once; started
//	                      one after the other, the first would wait forever)
//	-relay -- CMD ARGS... do not serve MCP: start CMD as a child and only copy
//	                      bytes, stdin -> its stdin and its stdout -> stdout
//	                      (two io.Copy goroutines, no parsing); its stderr is
//	                      ours. Stdin EOF closes the child's stdin; the relay
//	                      exits with the child's status when the child exits.
//	                      One extra process hop, the floor of any stdio proxy
//	                      (BenchmarkToolsCall's relay path).
//	-relay -read -- CMD   the same, but each message is read as a proxy must
//	                      read it (decoded and checked once) and sent on under
//	                      the relay's own id, its answer back under the
//	                      client's; writes batched per burst (readRelay,
//	                      BenchmarkToolsCall's read-relay path)
//
// Tools (arguments in parentheses):
//
//	echo (any)            text: the arguments' JSON; structuredContent: the
//	                      arguments exactly as received
//	crash (code=3)        writes "crashing now" lines to stderr, exits with code
//	hang                  never answers (a notifications/cancelled is recorded)
//	slow (ms)             answers "slept" after ms; if cancelled first, never
//	                      answers (unless -ignore-cancel)
//	progress (steps, ms)  sends steps notifications/progress with the request's
//	                      _meta.progressToken (verbatim), ms apart, then "done"
//	big (bytes)           text content of exactly bytes 'x' characters
//	odd (isError)         the fixed result Odd (or OddError with isError true):
//	                      an unknown content type, 19+ digit integers, _meta,
//	                      odd spacing; forwarded results must be byte-identical;
//	                      with badUTF8 true, a text with bytes that are not UTF-8
//	change                adds tool added_N, sends tools/list_changed, answers
//	relist                (with -tools-file) sends tools/list_changed and
//	                      prompts/list_changed, answers "relisted"
//	sample (code, steps)  sends sampling/createMessage to the client and
//	                      answers with the client's result as structuredContent
//	                      (or an isError result carrying the client's error);
//	                      with code, the JSON-RPC error code with the client's
//	                      result in its message; with steps and a progressToken,
//	                      progress 1 of steps before asking, the rest after the
//	                      client's answer
//	log (level, data,     sends notifications/message (count times, default
//	     count)           once), answers "logged"; data defaults to
//	                      -log-text's S, else "hello from testbackend"
//	deaf (ms, flood,      answers "deaf", sends flood requests of method
//	      method,         (default ping; ids "f-N", or all "f-0" with
//	      same_id)        same_id), then stops reading stdin for ms (a
//	                      stuck child whose stdin pipe fills up)
//	stats                 structuredContent {"cancelled":[requestId...],
//	                      "reasons":[...], "initialized":bool,
//	                      "capabilities":<client capabilities>,
//	                      "clientInfo":<the client's clientInfo>,
//	                      "meta":<the _meta of the last tools/call but this>,
//	                      "environ":[NAME=value...] (its environment),
//	                      "floodReplies":{"<code>":n} (answers to deaf's
//	                      flood requests by error code, "0" for results),
//	                      "logLevel":<the level of the last logging/setLevel>,
//	                      "notifications":{method: count} of other notifications}
//
// stdin EOF ends the process with status 0 (unless -ignore-term).
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Odd is the result of the odd tool, byte for byte (spacing included).
const Odd = `{ "content": [ {"type":"hologram","data":"AAEC","extra":{"k":[1,2.50,3e2]}}, {"type":"text","text":"caf\u00e9 <&> \u2028"} ], "structuredContent": {"big":12345678901234567890123,"neg":-98765432109876543210,"exp":1E+400,"nested":{"id":9007199254740993}}, "_meta": {"example.com/trace":"t-1","n":18446744073709551616} }`

// OddError is the odd tool's isError variant.
const OddError = `{"content":[{"type":"text","text":"it failed"}],"isError":true,"structuredContent":{"code":12345678901234567890123},"_meta":{"k":null}}`

// builtinTools are the tools every testbackend lists, in order.
var builtinTools = []string{"echo", "crash", "hang", "slow", "progress", "big", "odd", "change", "sample", "log", "stats", "deaf"}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

type server struct {
	name         string
	chattyStdout bool
	chattyStderr int
	pageSize     int
	prompts      bool
	resources    bool
	asks         bool
	app          bool
	appGated     bool
	listOnInit   bool
	ignoreCancel bool
	stringIDs    bool
	describe     string
	logText      string // the log tool's default data
	refuseLevel  string // logging/setLevel's error message, if any
	say          string
	instructions string
	listMeta     string
	tasks        bool
	taskTable    taskTable
	tasksExt     bool
	extTable     extTable
	// sink, when set, takes every message instead of stdout (-http).
	sink      func(msg string)
	toolsFile string

	calls sync.WaitGroup // tools/call goroutines
	// tracer traces calls when OTEL_EXPORTER_OTLP_ENDPOINT is set
	// (trace.go); nil otherwise.
	tracer trace.Tracer

	wmu sync.Mutex // stdout
	out *bufio.Writer

	mu        sync.Mutex
	tools     []string // names, in order
	added     int
	cancelled []json.RawMessage
	// floodReplies counts the answers to deaf's flood requests by error
	// code ("0": a result)
	floodReplies map[string]int
	reasons      []string
	cancels      map[string]chan struct{} // by request id (cancellable)
	waiting      map[string]chan message  // our requests to the client, by id
	nextID       int
	initialized  bool
	clientCaps   json.RawMessage
	clientInfo   json.RawMessage
	lastMeta     json.RawMessage
	audience     string              // -http-audience (bearer.go)
	subjectTools map[string][]string // -subject-tool: SUB → its own tools (bearer.go)
	logLevel     string              // the level of the last logging/setLevel
	notes        map[string]int      // notifications received, by method
}

func main() {
	fs := flag.NewFlagSet("testbackend", flag.ExitOnError)
	name := fs.String("name", "testbackend", "serverInfo.name")
	startDelay := fs.Duration("start-delay", 0, "sleep before reading stdin")
	failStart := fs.Int("fail-start", 0, "exit with this code before initialize")
	banner := fs.Int("banner", 0, "non-JSON lines on stdout at start")
	chattyStdout := fs.Bool("chatty-stdout", false, "a non-JSON stdout line before every message")
	stderrLines := fs.Int("stderr-lines", 0, "stderr lines at start")
	stderrText := fs.String("stderr-text", "", "write this line to stderr at start")
	stdoutText := fs.String("stdout-text", "", "write this (non-JSON) line to stdout at start")
	stderrJSON := fs.String("stderr-json", "", `write {"msg":S} to stderr at start`)
	logText := fs.String("log-text", "", "the log tool's default data")
	refuseLevel := fs.String("refuse-level", "", "answer logging/setLevel with an error of this message")
	describe := fs.String("describe", "", "append this to every tool's description")
	say := fs.String("say", "", "append this to prompt texts, resource contents and progress messages")
	chattyStderr := fs.Int("chatty-stderr", 0, "stderr lines per request")
	extraTools := fs.Int("extra-tools", 0, "extra tools")
	pageSize := fs.Int("page-size", 0, "tools/list page size")
	instructions := fs.String("instructions", "", "instructions in the initialize result")
	listMeta := fs.String("list-meta", "", "_meta of tools/list results")
	tasks := fs.Bool("tasks", false, "declare tasks")
	tasksExt := fs.Bool("tasks-ext", false, "the tasks extension of 2026-07-28")
	taskIDs := fs.String("task-ids", "random", "with -tasks-ext: random or seq")
	httpAddr := fs.String("http", "", "serve Streamable HTTP of 2026-07-28 (no session) on this address")
	httpAudience := fs.String("http-audience", "", "with -http: take only bearer JWTs meant for this audience; add the tool whoami")
	subjectTools := map[string][]string{}
	fs.Func("subject-tool", "with -http-audience: SUB=NAME, a tool listed to and called by the token's subject SUB only (repeatable)", func(v string) error {
		sub, tool, ok := strings.Cut(v, "=")
		if !ok || sub == "" || tool == "" {
			return fmt.Errorf("want SUB=NAME, got %q", v)
		}
		subjectTools[sub] = append(subjectTools[sub], tool)
		return nil
	})
	prompts := fs.Bool("prompts", false, "declare prompts")
	resources := fs.Bool("resources", false, "declare resources")
	asks := fs.Bool("asks", false, "a prompt and a resource that ask the client first")
	app := fs.Bool("app", false, "an MCP App: UI tools and resources")
	appGated := fs.Bool("app-gated", false, "-app, its tools only for clients that declare the extension")
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM and stdin EOF")
	grandchild := fs.Bool("grandchild", false, "start a grandchild")
	escape := fs.Bool("escape", false, "start a grandchild in its own session holding our stdout and stderr")
	listOnInit := fs.Bool("list-changed-on-init", false, "send tools/list_changed after initialized")
	ignoreCancel := fs.Bool("ignore-cancel", false, "slow answers even when cancelled")
	stringIDs := fs.Bool("string-ids", false, "echo numeric request ids back as strings")
	relayMode := fs.Bool("relay", false, "only relay bytes to and from the command after --")
	readMode := fs.Bool("read", false, "with -relay: read each message and send it on under the relay's own id (readRelay)")
	pidDir := fs.String("pid-dir", "", "create DIR/<pid> at start")
	barrier := fs.Int("start-barrier", 0, "with -pid-dir: wait until DIR holds N files before reading stdin")
	exitFile := fs.String("exit-file", "", "write how we were stopped (eof, term) to this file")
	hostile := fs.Bool("hostile", false, "add the tools read_file, write_file and connect")
	envDigest := fs.Bool("env-digest", false, "add the tool env_digest: the SHA-256 of an environment variable's value")
	toolsFile := fs.String("tools-file", "", "definitions that replace or add to the built-in ones, read at every list")
	fs.VisitAll(func(f *flag.Flag) {
		env := "TESTBACKEND_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				fmt.Fprintf(os.Stderr, "testbackend: %s: %v\n", env, err)
				os.Exit(2)
			}
		}
	})
	fs.Parse(os.Args[1:])
	if *relayMode {
		os.Exit(relay(fs.Args(), *readMode))
	}
	if *tasks && *tasksExt {
		fmt.Fprintln(os.Stderr, "testbackend: -tasks and -tasks-ext exclude each other")
		os.Exit(2)
	}

	if *pidDir != "" {
		if err := os.WriteFile(filepath.Join(*pidDir, strconv.Itoa(os.Getpid())), nil, 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "testbackend: %v\n", err)
			os.Exit(2)
		}
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	} else if *exitFile != "" {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			os.WriteFile(*exitFile, []byte("term"), 0o600)
			os.Exit(0)
		}()
	}
	if *stderrText != "" {
		fmt.Fprintln(os.Stderr, *stderrText)
	}
	if *stderrJSON != "" {
		fmt.Fprintf(os.Stderr, "{\"msg\":%s}\n", quote(*stderrJSON))
	}
	for i := range *stderrLines {
		fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
	}
	if *grandchild {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "grandchild: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "grandchild pid %d\n", cmd.Process.Pid)
	}
	if *escape {
		pid, err := startEscapee()
		if err != nil {
			fmt.Fprintf(os.Stderr, "escapee: %v\n", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "escapee pid %d\n", pid)
	}
	if *failStart != 0 {
		fmt.Fprintf(os.Stderr, "failing at start with %d\n", *failStart)
		os.Exit(*failStart)
	}
	time.Sleep(*startDelay)
	for *barrier > 0 {
		if entries, err := os.ReadDir(*pidDir); err == nil && len(entries) >= *barrier {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}

	s := &server{
		tracer:       newTracer(),
		name:         *name,
		chattyStdout: *chattyStdout,
		chattyStderr: *chattyStderr,
		pageSize:     *pageSize,
		describe:     *describe,
		logText:      *logText,
		refuseLevel:  *refuseLevel,
		say:          *say,
		instructions: *instructions,
		listMeta:     *listMeta,
		tasks:        *tasks,
		tasksExt:     *tasksExt,
		extTable:     extTable{seq: *taskIDs == "seq"},
		prompts:      *prompts,
		resources:    *resources,
		asks:         *asks,
		app:          *app || *appGated,
		appGated:     *appGated,
		listOnInit:   *listOnInit,
		ignoreCancel: *ignoreCancel,
		stringIDs:    *stringIDs,
		toolsFile:    *toolsFile,
		out:          bufio.NewWriterSize(os.Stdout, 64<<10),
		tools:        slices.Clone(builtinTools),
		cancels:      map[string]chan struct{}{},
		waiting:      map[string]chan message{},
		floodReplies: map[string]int{},
	}
	if *toolsFile != "" {
		s.tools = append(s.tools, "relist")
	}
	if *hostile {
		s.tools = append(s.tools, hostileTools...)
		s.tools = append(s.tools, limitTools...)
	}
	if *envDigest {
		s.tools = append(s.tools, "env_digest")
	}
	if s.audience = *httpAudience; s.audience != "" {
		s.tools = append(s.tools, "whoami")
		s.subjectTools = subjectTools
	}
	for i := range *extraTools {
		s.tools = append(s.tools, fmt.Sprintf("extra_%03d", i))
	}
	if *stdoutText != "" {
		s.raw(*stdoutText)
	}
	for i := range *banner {
		s.raw(fmt.Sprintf("Banner line %d: welcome to testbackend (not JSON)", i))
	}
	if *httpAddr != "" {
		if err := s.serveHTTP(*httpAddr); err != nil {
			fmt.Fprintf(os.Stderr, "testbackend: %v\n", err)
			os.Exit(1)
		}
		return
	}

	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.handle(line)
		}
		if err != nil {
			if err != io.EOF {
				fmt.Fprintf(os.Stderr, "stdin: %v\n", err)
			}
			if *ignoreTerm {
				for {
					time.Sleep(time.Hour)
				}
			}
			// Let calls already running finish (briefly), as piped use expects.
			done := make(chan struct{})
			go func() { s.calls.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(100 * time.Millisecond):
			}
			if *exitFile != "" {
				os.WriteFile(*exitFile, []byte("eof"), 0o600)
			}
			os.Exit(0)
		}
	}
}

// relay starts argv as a child and copies bytes between it and our stdio
// until the child exits; it returns the child's exit status. The child does
// not inherit TESTBACKEND_RELAY (it would relay again).
func relay(argv []string, read bool) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "testbackend: -relay needs a command after --")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TESTBACKEND_RELAY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testbackend: relay: %v\n", err)
		return 1
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testbackend: relay: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testbackend: relay: %v\n", err)
		return 1
	}
	if read {
		readRelay(os.Stdin, os.Stdout, stdin, stdout)
	} else {
		go func() {
			io.Copy(stdin, os.Stdin)
			stdin.Close() // our stdin closed: the child sees EOF
		}()
		io.Copy(os.Stdout, stdout) // until the child's stdout closes
	}
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "testbackend: relay: %v\n", err)
		return 1
	}
	return 0
}

// raw writes one line to stdout as is.
func (s *server) raw(line string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.out.WriteString(line)
	s.out.WriteByte('\n')
	s.out.Flush()
}

// send writes one message (a pre-built JSON object) to stdout.
func (s *server) send(msg string) {
	if s.sink != nil {
		s.sink(msg)
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.chattyStdout {
		s.out.WriteString("npm notice: this line is not JSON\n")
	}
	s.out.WriteString(msg)
	s.out.WriteByte('\n')
	s.out.Flush()
}

// request sends the client a request and waits for its answer; false if
// cancel is closed first.
func (s *server) request(method, params string, cancel <-chan struct{}) (message, bool) {
	ch := make(chan message, 1)
	s.mu.Lock()
	s.nextID++
	id := `"s-` + strconv.Itoa(s.nextID) + `"`
	s.waiting[id] = ch
	s.mu.Unlock()
	s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":` + quote(method) + `,"params":` + params + `}`)
	select {
	case r := <-ch:
		return r, true
	case <-cancel:
		return message{}, false
	}
}

// progress sends step of steps as a notifications/progress under the
// progressToken of meta (verbatim), if it has one.
func (s *server) progress(meta json.RawMessage, step, steps int) {
	var m struct {
		Token json.RawMessage `json:"progressToken"`
	}
	json.Unmarshal(meta, &m)
	if len(m.Token) == 0 {
		return
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(m.Token) + `,"progress":` + strconv.Itoa(step) + `,"total":` + strconv.Itoa(steps) + `,"message":` + quote("step "+strconv.Itoa(step)+s.say) + `}}`)
}

func (s *server) reply(id json.RawMessage, result string) {
	s.send(`{"jsonrpc":"2.0","id":` + s.echoID(id) + `,"result":` + result + `}`)
}

// echoID is the id as the reply carries it: as received, or with -string-ids
// a number turned into a string.
func (s *server) echoID(id json.RawMessage) string {
	if s.stringIDs && len(id) > 0 && id[0] != '"' {
		return `"` + string(id) + `"`
	}
	return string(id)
}

func (s *server) replyError(id json.RawMessage, code int, msg string, data string) {
	e := `{"code":` + strconv.Itoa(code) + `,"message":` + quote(msg)
	if data != "" {
		e += `,"data":` + data
	}
	s.send(`{"jsonrpc":"2.0","id":` + s.echoID(id) + `,"error":` + e + `}}`)
}

// quote encodes v as JSON without HTML escaping.
func quote(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func text(t string) string {
	return `{"content":[{"type":"text","text":` + quote(t) + `}]}`
}

func (s *server) handle(line []byte) {
	var msg message
	if err := json.Unmarshal(line, &msg); err != nil {
		fmt.Fprintf(os.Stderr, "bad line: %v\n", err)
		return
	}
	for i := range s.chattyStderr {
		fmt.Fprintf(os.Stderr, "chatty stderr %d for %s\n", i, msg.Method)
	}
	hasID := len(msg.ID) > 0 && string(msg.ID) != "null"
	switch {
	case msg.Method == "" && hasID: // a response to our request
		s.mu.Lock()
		ch := s.waiting[string(msg.ID)]
		delete(s.waiting, string(msg.ID))
		if ch == nil { // an answer to a flood request: count it by code
			var e struct {
				Code int `json:"code"`
			}
			json.Unmarshal(msg.Error, &e)
			s.floodReplies[strconv.Itoa(e.Code)]++
		}
		s.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	case msg.Method == "notifications/initialized":
		s.mu.Lock()
		s.initialized = true
		s.mu.Unlock()
		if s.listOnInit {
			s.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		}
	case msg.Method == "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		json.Unmarshal(msg.Params, &p)
		s.mu.Lock()
		s.cancelled = append(s.cancelled, p.RequestID)
		s.reasons = append(s.reasons, p.Reason)
		if ch := s.cancels[string(p.RequestID)]; ch != nil {
			close(ch)
			delete(s.cancels, string(p.RequestID))
		}
		s.mu.Unlock()
	case !hasID: // other notifications
		s.mu.Lock()
		if s.notes == nil {
			s.notes = make(map[string]int)
		}
		s.notes[msg.Method]++
		s.mu.Unlock()
	case msg.Method == "initialize":
		var p struct {
			Capabilities json.RawMessage `json:"capabilities"`
			ClientInfo   json.RawMessage `json:"clientInfo"`
		}
		json.Unmarshal(msg.Params, &p)
		s.mu.Lock()
		s.clientCaps = p.Capabilities
		s.clientInfo = p.ClientInfo
		s.mu.Unlock()
		caps := `"tools":{"listChanged":true},"logging":{}`
		if s.prompts || s.asks {
			caps += `,"prompts":{}`
		}
		if s.resources || s.app || s.asks {
			caps += `,"resources":{"subscribe":true}`
		}
		if s.app {
			caps += `,"extensions":{"io.modelcontextprotocol/ui":{}}`
		}
		if s.tasks {
			caps += "," + taskCaps
		}
		instructions := ""
		if s.instructions != "" {
			instructions = `,"instructions":` + quote(s.instructions)
		}
		s.reply(msg.ID, `{"protocolVersion":"2025-11-25","capabilities":{`+caps+`},"serverInfo":{"name":`+quote(s.name)+`,"version":"1.0.0"}`+instructions+`}`)
	case msg.Method == "ping":
		s.reply(msg.ID, `{}`)
	case msg.Method == "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		json.Unmarshal(msg.Params, &p)
		if s.refuseLevel != "" {
			s.replyError(msg.ID, -32602, s.refuseLevel, "")
			break
		}
		s.mu.Lock()
		s.logLevel = p.Level
		s.mu.Unlock()
		s.reply(msg.ID, `{}`)
	case msg.Method == "tools/list":
		s.listTools(msg)
	case s.asking(msg):
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			s.serveAsking(msg)
		}()
	case msg.Method == "prompts/list" && (s.prompts || s.asks):
		var list []string
		if s.prompts {
			list = s.definitions("prompts", []string{"greet"}, func(string) string {
				return `{"name":"greet","description":"Say hello","arguments":[{"name":"who"}]}`
			})
		}
		if s.asks {
			list = append(list, askPrompt)
		}
		s.reply(msg.ID, `{"prompts":[`+strings.Join(list, ",")+`]}`)
	case msg.Method == "prompts/get" && s.prompts:
		s.reply(msg.ID, `{"messages":[{"role":"user","content":{"type":"text","text":`+quote("hello"+s.say)+`}}]}`)
	case msg.Method == "resources/list" && (s.resources || s.app || s.asks):
		var list []string
		if s.resources {
			list = append(list, `{"uri":"test://r1","name":"r1"}`)
			if s.audience != "" {
				list = append(list, ownResource(msg.Params))
			}
		}
		if s.asks {
			list = append(list, sampledRecord)
		}
		if s.app {
			list = append(list, appResource)
		}
		s.reply(msg.ID, `{"resources":[`+strings.Join(list, ",")+`]}`)
	case msg.Method == "resources/templates/list" && (s.resources || s.app || s.asks):
		var list []string
		if s.resources {
			list = append(list, `{"uriTemplate":"test://t/{id}","name":"t"}`)
		}
		if s.app {
			list = append(list, appTemplate)
		}
		s.reply(msg.ID, `{"resourceTemplates":[`+strings.Join(list, ",")+`]}`)
	case msg.Method == "resources/subscribe" && (s.resources || s.app):
		// Answered, then the resource is "updated" at once.
		var p struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(msg.Params, &p)
		s.reply(msg.ID, `{}`)
		s.send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":` + quote(p.URI) + `}}`)
	case msg.Method == "resources/unsubscribe" && (s.resources || s.app):
		s.reply(msg.ID, `{}`)
	case msg.Method == "completion/complete" && s.say != "":
		s.reply(msg.ID, `{"completion":{"values":[`+quote("v"+s.say)+`],"hasMore":false}}`)
	case msg.Method == "completion/complete" && s.app:
		// The one value is the URI the reference named here.
		s.reply(msg.ID, `{"completion":{"values":[`+quote(stringMember(memberOf(msg.Params, "ref"), "uri"))+`],"hasMore":false}}`)
	case msg.Method == "resources/read" && s.app && isAppURI(stringMember(msg.Params, "uri")):
		s.reply(msg.ID, s.appRead(stringMember(msg.Params, "uri")))
	case msg.Method == "resources/read" && s.resources:
		s.reply(msg.ID, `{"contents":[{"uri":"test://r1","text":`+quote("r1 body"+s.say)+`,"x-unknown":[1]}]}`)
	case msg.Method == "tools/call" && bytes.Contains(msg.Params, []byte(`"name":"deaf"`)):
		var p struct {
			Arguments struct {
				MS     int    `json:"ms"`
				Flood  int    `json:"flood"`
				Method string `json:"method"`
				SameID bool   `json:"same_id"`
			} `json:"arguments"`
		}
		json.Unmarshal(msg.Params, &p)
		s.reply(msg.ID, text("deaf"))
		method := p.Arguments.Method
		if method == "" {
			method = "ping"
		}
		params := `{}`
		if method == "sampling/createMessage" {
			params = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`
		}
		for i := range p.Arguments.Flood {
			if p.Arguments.SameID {
				i = 0
			}
			s.send(`{"jsonrpc":"2.0","id":"f-` + strconv.Itoa(i) + `","method":` + quote(method) + `,"params":` + params + `}`)
		}
		time.Sleep(time.Duration(p.Arguments.MS) * time.Millisecond) // in the read loop
	case s.tasksExt && s.serveTasksExt(msg):
	case s.tasks && msg.Method == "tools/call" && len(bytes.TrimSpace(memberOf(msg.Params, "task"))) > 0:
		s.startTask(msg)
	case s.tasks && s.serveTask(msg):
	case msg.Method == "tools/call":
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			s.call(msg)
		}()
	default:
		s.replyError(msg.ID, -32601, "Method not found", `{"method":`+quote(msg.Method)+`}`)
	}
}

func (s *server) listTools(msg message) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(msg.Params, &p)
	s.mu.Lock()
	names := append([]string(nil), s.tools...)
	s.mu.Unlock()
	names = append(names, s.subjectTools[subjectOf(msg.Params)]...)
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "c"))
		if err != nil || n > len(names) {
			s.replyError(msg.ID, -32602, "bad cursor", "")
			return
		}
		start = n
	}
	end := len(names)
	if s.pageSize > 0 && start+s.pageSize < end {
		end = start + s.pageSize
	}
	defs := s.definitions("tools", names, func(n string) string {
		execution := ""
		if s.tasks {
			execution = `,"execution":{"taskSupport":"optional"}`
		}
		return `{"name":` + quote(n) + `,"description":` + quote("testbackend tool "+n+s.describe) + `,"inputSchema":{"type":"object"}` + execution + `}`
	})
	if end == len(names) {
		if s.app && (!s.appGated || s.clientRendersApps()) {
			defs = append(defs, appTools()...)
		}
		if s.tasksExt {
			defs = append(defs, extToolDefs()...)
		}
		end = len(defs) // the tools file's own, and the app's, come last
	}
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	b.WriteString(strings.Join(defs[start:end], ","))
	b.WriteString(`]`)
	if end < len(names) {
		b.WriteString(`,"nextCursor":"c` + strconv.Itoa(end) + `"`)
	}
	if s.listMeta != "" {
		b.WriteString(`,"_meta":` + s.listMeta)
	}
	b.WriteString(`}`)
	s.reply(msg.ID, b.String())
}

// fileDefs reads -tools-file's definitions of kind ("tools" or
// "prompts"), by name; none without the flag or the file.
func (s *server) fileDefs(kind string) map[string]map[string]json.RawMessage {
	if s.toolsFile == "" {
		return nil
	}
	data, err := os.ReadFile(s.toolsFile)
	if err != nil {
		return nil
	}
	var f map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		fmt.Fprintf(os.Stderr, "testbackend: %s: %v\n", s.toolsFile, err)
		return nil
	}
	return f[kind]
}

// definitions are the definitions of kind listed: each built-in one (of
// names, made by builtin) with the tools file's members put in, then the
// file's other definitions, sorted by name.
func (s *server) definitions(kind string, names []string, builtin func(string) string) []string {
	file := s.fileDefs(kind)
	var out []string
	for _, n := range names {
		def := builtin(n)
		if over, ok := file[n]; ok {
			var m map[string]json.RawMessage
			json.Unmarshal([]byte(def), &m)
			for k, v := range over {
				if k != "result" {
					m[k] = v
				}
			}
			def = quote(m)
		}
		out = append(out, def)
	}
	var extra []string
	for n := range file {
		if !slices.Contains(names, n) {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	for _, n := range extra {
		m := map[string]json.RawMessage{"name": json.RawMessage(quote(n))}
		if kind == "tools" {
			m["inputSchema"] = json.RawMessage(`{"type":"object"}`)
		}
		for k, v := range file[n] {
			if k != "result" {
				m[k] = v
			}
		}
		out = append(out, quote(m))
	}
	return out
}

// call runs one tools/call in its own goroutine.
func (s *server) call(msg message) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(msg.Params, &p); err != nil {
		s.replyError(msg.ID, -32602, "bad params", "")
		return
	}
	var args struct {
		Code    int             `json:"code"`
		MS      int             `json:"ms"`
		Steps   int             `json:"steps"`
		Bytes   int             `json:"bytes"`
		IsError bool            `json:"isError"`
		Level   string          `json:"level"`
		Data    json.RawMessage `json:"data"`
		Count   int             `json:"count"`
		BadUTF8 bool            `json:"badUTF8"`
		Path    string          `json:"path"`
		Text    string          `json:"text"`
		Addr    string          `json:"addr"`
		Network string          `json:"network"`
		Max     string          `json:"max"`
		MB      string          `json:"mb"`
		Name    string          `json:"name"`
	}
	if len(p.Arguments) > 0 {
		json.Unmarshal(p.Arguments, &args)
	}
	defer s.span(p.Name, p.Meta)()
	// stats is not a call in progress for the stats that follow it: a
	// test that polls "active" would count the previous poll while its
	// entry is removed after its reply.
	cancel, done := (<-chan struct{})(nil), func() {}
	if p.Name != "stats" {
		cancel, done = s.cancellable(msg.ID)
	}
	defer done()
	s.mu.Lock()
	prevMeta := s.lastMeta
	if p.Name != "stats" {
		s.lastMeta = p.Meta
	}
	s.mu.Unlock()

	fileTool, inFile := s.fileDefs("tools")[p.Name]
	switch {
	case s.app && (p.Name == "show" || p.Name == "poll"):
		s.reply(msg.ID, s.appCall(p.Name))
	case slices.Contains(s.tools, p.Name) && slices.Contains(limitTools, p.Name):
		arg := args.Max
		if p.Name == "alloc" {
			arg = args.MB
		}
		s.reply(msg.ID, limitCall(p.Name, arg))
	case slices.Contains(s.tools, p.Name) && slices.Contains(hostileTools, p.Name):
		s.reply(msg.ID, hostileCall(p.Name, args.Path, args.Text, args.Addr, args.Network))
	case p.Name == "whoami" && s.audience != "":
		s.reply(msg.ID, whoami(p.Meta, s.audience))
	case slices.Contains(s.subjectTools[subjectOf(msg.Params)], p.Name):
		s.reply(msg.ID, `{"content":[{"type":"text","text":`+quote(p.Name+" for "+subjectOf(msg.Params))+`}]}`)
	case p.Name == "env_digest" && slices.Contains(s.tools, p.Name):
		d := "unset"
		if v, ok := os.LookupEnv(args.Name); ok {
			d = fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(v)))
		}
		s.reply(msg.ID, text(d))
	case inFile && len(fileTool["result"]) > 0:
		s.reply(msg.ID, string(fileTool["result"]))
	case p.Name == "relist" && s.toolsFile != "":
		s.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		if s.prompts {
			s.send(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
		}
		s.reply(msg.ID, text("relisted"))
	case p.Name == "echo" || strings.HasPrefix(p.Name, "extra_") || strings.HasPrefix(p.Name, "added_") || inFile && !slices.Contains(builtinTools, p.Name):
		a := p.Arguments
		if len(a) == 0 {
			a = json.RawMessage("{}")
		}
		s.reply(msg.ID, `{"content":[{"type":"text","text":`+quote(string(a))+`}],"structuredContent":`+string(a)+`}`)
	case p.Name == "crash":
		code := args.Code
		if code == 0 {
			code = 3
		}
		for i := range 3 {
			fmt.Fprintf(os.Stderr, "crashing now (%d)\n", i)
		}
		os.Exit(code)
	case p.Name == "hang":
		<-cancel
	case p.Name == "slow":
		if s.ignoreCancel {
			cancel = nil
		}
		select {
		case <-time.After(time.Duration(args.MS) * time.Millisecond):
			s.reply(msg.ID, text("slept"))
		case <-cancel:
		}
	case p.Name == "progress":
		for i := range args.Steps {
			s.progress(p.Meta, i+1, args.Steps)
			time.Sleep(time.Duration(args.MS) * time.Millisecond)
		}
		s.reply(msg.ID, text("done"))
	case p.Name == "big":
		s.reply(msg.ID, text(strings.Repeat("x", args.Bytes)))
	case p.Name == "odd" && args.BadUTF8:
		// Raw bytes that are not UTF-8 inside a JSON string (the text is
		// "ok \xff\xfe end").
		s.reply(msg.ID, "{\"content\":[{\"type\":\"text\",\"text\":\"ok \xff\xfe end\"}]}")
	case p.Name == "odd":
		if args.IsError {
			s.reply(msg.ID, OddError)
		} else {
			s.reply(msg.ID, Odd)
		}
	case p.Name == "change":
		s.mu.Lock()
		s.added++
		n := fmt.Sprintf("added_%d", s.added)
		s.tools = append(s.tools, n)
		s.mu.Unlock()
		s.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		s.reply(msg.ID, text("added "+n))
	case p.Name == "sample":
		if args.Steps > 0 {
			s.progress(p.Meta, 1, args.Steps)
		}
		r, ok := s.request("sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`, cancel)
		for i := 2; ok && i <= args.Steps; i++ {
			s.progress(p.Meta, i, args.Steps)
		}
		switch {
		case !ok:
		case len(r.Error) > 0:
			s.reply(msg.ID, `{"content":[{"type":"text","text":"client error"}],"isError":true,"structuredContent":{"error":`+string(r.Error)+`}}`)
		case args.Code != 0:
			s.replyError(msg.ID, args.Code, "sampled "+string(r.Result), "")
		default:
			s.reply(msg.ID, `{"content":[{"type":"text","text":"sampled"}],"structuredContent":`+string(r.Result)+`}`)
		}
	case p.Name == "log":
		level := args.Level
		if level == "" {
			level = "info"
		}
		data := args.Data
		if len(data) == 0 {
			data = json.RawMessage(`"hello from testbackend"`)
			if s.logText != "" {
				data = json.RawMessage(quote(s.logText))
			}
		}
		for range max(args.Count, 1) {
			s.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":` + quote(level) + `,"logger":"tb","data":` + string(data) + `}}`)
		}
		s.reply(msg.ID, text("logged"))
	case p.Name == "stats":
		s.mu.Lock()
		st := map[string]any{
			"cancelled":     s.cancelled,
			"reasons":       s.reasons,
			"initialized":   s.initialized,
			"capabilities":  s.clientCaps,
			"clientInfo":    s.clientInfo,
			"meta":          prevMeta,
			"environ":       os.Environ(),
			"floodReplies":  s.floodReplies,
			"logLevel":      s.logLevel,
			"notifications": s.notes,
			// Tool calls in progress (stats is not one): a test's sync
			// point for "the call has reached the backend".
			"active": len(s.cancels),
		}
		if st["cancelled"] == nil {
			st["cancelled"] = []json.RawMessage{}
		}
		if st["reasons"] == nil {
			st["reasons"] = []string{}
		}
		b, _ := json.Marshal(st)
		s.mu.Unlock()
		s.reply(msg.ID, `{"content":[{"type":"text","text":"stats"}],"structuredContent":`+string(b)+`}`)
	default:
		s.replyError(msg.ID, -32602, "Tool not found: "+p.Name, `{"tool":`+quote(p.Name)+`}`)
	}
}

// cancellable registers the request id for notifications/cancelled: the
// returned channel closes when the client cancels it; done unregisters it.
func (s *server) cancellable(id json.RawMessage) (cancel <-chan struct{}, done func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.cancels[string(id)] = ch
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.cancels, string(id))
		s.mu.Unlock()
	}
}
