// Package streamhttp is the machinery of the gateway's HTTP transports
// (Streamable HTTP at /mcp, and the 2024-11-05 SSE transport where it
// applies): the event store a client resumes a stream from (EventStore),
// and the queue each stream's writer takes its events from within a
// session's byte budget (Queue, Budget).
//
// It knows nothing of JSON-RPC or of the gateway's sessions: an event's
// data and a queued message are bytes it keeps or moves as they are.
// Which stream a message belongs to, what a session is, and every error
// reply belong to the gateway.
package streamhttp
