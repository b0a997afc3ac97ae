// Package streamhttp is the machinery of the gateway's HTTP transports
// (Streamable HTTP at /mcp, and the 2024-11-05 SSE transport where it
// applies): the event store a client resumes a stream from (EventStore),
// how an event is framed and named on a stream (Frame, WriteFrames,
// EventID, ParseEventID), the queue each stream's writer takes its events
// from within a session's byte budget (Queue, Budget), the cut of a write
// to a client that does not read once its session ends (Cutter), and the
// sealed session ids that any replica with the key opens (Sealer,
// ReplicaName).
//
// It knows nothing of JSON-RPC or of the gateway's sessions: an event's
// data, a queued message and a sealed payload are bytes it keeps, frames,
// moves or seals as they are. Which stream a message belongs to, what a
// session is and what its sealed id holds, where a key comes from, and
// every error reply belong to the gateway.
package streamhttp
