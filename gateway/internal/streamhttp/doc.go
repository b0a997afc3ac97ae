// Package streamhttp is the machinery of the gateway's HTTP transports
// (Streamable HTTP at /mcp, and the 2024-11-05 SSE transport where it
// applies): the event store a client resumes a stream from (EventStore),
// how an event is framed and named on a stream (Frame, WriteFrames,
// EventID, ParseEventID), the queue each stream's writer takes its events
// from within a session's byte budget (Queue, Budget), and the cut of a
// write to a client that does not read once its session ends (Cutter).
//
// It knows nothing of JSON-RPC or of the gateway's sessions: an event's
// data and a queued message are bytes it keeps, frames or moves as they
// are. Which stream a message belongs to, what a session is, and every
// error reply belong to the gateway.
package streamhttp
