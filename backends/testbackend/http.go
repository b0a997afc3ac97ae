package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
)

// -http ADDR: the server on Streamable HTTP of 2026-07-28 (no session), the
// way a remote backend of that revision is reached: every POST /mcp is one
// message, and a request's response is the POST's answer, as JSON (HTTP
// 404 for -32601, 400 for -32602, -32020, -32021 and -32022). The same
// handler serves it as on stdio; each request gets an id of the server's
// own while it is served, so that requests of different POSTs with equal
// ids do not meet. The Mcp-Method and Mcp-Name headers, when given, must
// match the body (-32020). Notifications the server sends have no stream
// to go to and are dropped; so are its requests to the client (none of
// the fixtures of -tasks-ext sends one). The listening address is written
// to stderr ("listening on ADDR").

// httpServer routes the server's messages to the POSTs waiting for them.
type httpServer struct {
	// read serialises the handler, as the one read loop of stdin does.
	read    sync.Mutex
	mu      sync.Mutex
	next    int
	waiting map[string]chan json.RawMessage // by the id of the server's own
}

func (s *server) serveHTTP(addr string) error {
	h := &httpServer{waiting: map[string]chan json.RawMessage{}}
	s.sink = h.deliver
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "listening on %s\n", l.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method == "" {
			http.Error(w, "not a JSON-RPC request or notification", http.StatusBadRequest)
			return
		}
		if s.audience != "" {
			claims, why := bearerClaims(r.Header, s.audience)
			if claims == nil {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description=`+quote(why))
				http.Error(w, why, http.StatusUnauthorized)
				return
			}
			sub, _ := claims["sub"].(string)
			body = withSubject(body, sub)
		}
		if len(m.ID) == 0 || string(m.ID) == "null" {
			h.handle(s, body)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if e := checkHeaders(r.Header, m.Method, m.Params); e != "" {
			writeResponse(w, m.ID, json.RawMessage(`{"jsonrpc":"2.0","id":0,"error":{"code":-32020,"message":`+quote(e)+`}}`))
			return
		}
		own, ch := h.claim()
		var params map[string]json.RawMessage
		json.Unmarshal(body, &params)
		params["id"] = json.RawMessage(own)
		line, _ := json.Marshal(params)
		go h.handle(s, line)
		select {
		case resp := <-ch:
			writeResponse(w, m.ID, resp)
		case <-r.Context().Done():
			h.drop(own)
			h.handle(s, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+own+`}}`))
		}
	})
	return http.Serve(l, mux)
}

// checkHeaders says what is wrong with a request's Mcp-Method and Mcp-Name
// headers, or "".
func checkHeaders(h http.Header, method string, params json.RawMessage) string {
	if got := h.Get("Mcp-Method"); got != "" && got != method {
		return "Mcp-Method header " + strconv.Quote(got) + " does not match the method " + strconv.Quote(method)
	}
	member := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}[method]
	if got := h.Get("Mcp-Name"); got != "" && member != "" && got != stringMember(params, member) {
		return "Mcp-Name header " + strconv.Quote(got) + " does not match the request's " + member
	}
	return ""
}

// handle hands one message to the server, one at a time.
func (h *httpServer) handle(s *server, msg []byte) {
	h.read.Lock()
	defer h.read.Unlock()
	s.handle(msg)
}

// claim returns a fresh id of the server's own and where its response goes.
func (h *httpServer) claim() (string, chan json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	id := `"http-` + strconv.Itoa(h.next) + `"`
	ch := make(chan json.RawMessage, 1)
	h.waiting[id] = ch
	return id, ch
}

func (h *httpServer) drop(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.waiting, id)
}

// deliver takes a message the server sends: a response goes to its POST.
func (h *httpServer) deliver(msg string) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal([]byte(msg), &m)
	h.mu.Lock()
	ch := h.waiting[string(m.ID)]
	delete(h.waiting, string(m.ID))
	h.mu.Unlock()
	if ch != nil {
		ch <- json.RawMessage(msg)
	}
}

// writeResponse answers a POST with resp under the client's id, a result
// with its resultType ("complete" unless it says otherwise).
func writeResponse(w http.ResponseWriter, id, resp json.RawMessage) {
	var m map[string]json.RawMessage
	json.Unmarshal(resp, &m)
	m["id"] = id
	status := http.StatusOK
	if e := m["error"]; len(e) > 0 && string(e) != "null" {
		var code struct {
			Code int `json:"code"`
		}
		json.Unmarshal(e, &code)
		switch code.Code {
		case -32601:
			status = http.StatusNotFound
		case -32602, -32020, -32021, -32022:
			status = http.StatusBadRequest
		}
	} else if r := m["result"]; len(r) > 0 {
		var res map[string]json.RawMessage
		if json.Unmarshal(r, &res) == nil && res["resultType"] == nil {
			res["resultType"] = json.RawMessage(`"complete"`)
			m["result"], _ = json.Marshal(res)
		}
	}
	out, _ := json.Marshal(m)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
}
