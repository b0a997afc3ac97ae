package gateway

import "net/http"

// The HTTP front answers an error it writes itself through one of these two
// (a JSON-RPC error that a session answers goes out as that session's
// response, mapped by rpcError).

// refuseHTTP answers a request the front refuses as HTTP, before a message
// of it is served: a wrong method or header, no such session, a limit
// reached, a body that is not JSON-RPC. The answer is plain text, as
// go-sdk's Streamable HTTP handler writes it (clients and the wire scripts
// read the same bytes).
func refuseHTTP(w http.ResponseWriter, status int, msg string) {
	http.Error(w, msg, status)
}

// writeJSONError answers a request with JSON-RPC error responses (msg, one
// or a batch of them) as JSON: a refusal that names the message's id.
func writeJSONError(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}
