// Package streamhttp is the machinery of the gateway's Streamable HTTP
// transport (/mcp): the event store a client resumes a stream from
// (EventStore).
//
// It knows nothing of JSON-RPC or of the gateway's sessions: an event's
// data is bytes it keeps as they are. Which stream a message belongs to,
// what a session is, and every error reply belong to the gateway.
package streamhttp
