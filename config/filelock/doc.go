// Package filelock takes an exclusive lock on a file, across processes:
// the pin file's writers (gateways, mcp-gateway approve) and the audit
// log's rotation take it on a PATH.lock file beside what they change.
package filelock
