package main

import (
	"strings"
	"testing"
)

// logging/setLevel reaches the backends that declared logging, and a
// backend's log messages reach the client with the server's name in
// "logger", everything else as the backend wrote it.
func TestBackendLoggingProxied(t *testing.T) {
	t.Parallel()
	p := startGateway(t, baseEnv(t), "--stdio", "--config", beConfig(t, tb("tb")))
	p.send(initMsg + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	if r := p.readLine(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	p.send(req("lvl", "logging/setLevel", `{"level":"warning"}`) + "\n")
	if r := p.readLine(); r["result"] == nil {
		t.Fatalf("logging/setLevel: %v", r)
	}
	p.send(req("st", "tools/call", `{"name":"tb.stats","arguments":{}}`) + "\n")
	r := p.readLine()
	res, _ := r["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if sc["logLevel"] != "warning" {
		t.Errorf("the backend's level after logging/setLevel: %v", r)
	}
	p.send(req("log", "tools/call", `{"name":"tb.log","arguments":{"level":"error","data":{"b":1,"a":[2]}}}`) + "\n")
	var got []string
	for {
		m := p.Next()
		got = append(got, m.String())
		if m.ID() == `"log"` {
			break
		}
	}
	want := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"tb/tb","data":{"b":1,"a":[2]}}}`
	if len(got) != 2 || got[0] != want {
		t.Errorf("messages:\n%s\nwant first:\n%s", strings.Join(got, "\n"), want)
	}
}

// --debug names each message's method (and id) on stdin and stdout, and
// never its arguments.
func TestDebugLogsMethods(t *testing.T) {
	t.Parallel()
	s := startRaw(t, beConfig(t, tb("tb")), "e2e", "DEBUG=1")
	s.callTool("tb.echo", `{"query":"private query text"}`)
	s.toolsList()
	log := s.Stderr.String()
	for _, want := range []string{"dir=recv method=initialize id=", "dir=recv method=tools/call", "dir=recv method=notifications/initialized", "dir=send method=response id="} {
		if !strings.Contains(log, want) {
			t.Errorf("the debug log lacks %q", want)
		}
	}
	if strings.Contains(log, "private query text") {
		t.Errorf("the debug log holds a call's arguments:\n%s", log)
	}
}
