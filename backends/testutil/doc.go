// Package testutil is the one test harness of the module: a JSON-RPC
// client over a child's pipes (Client), a child process whose end a test
// waits for (Child), polling with backoff (WaitFor), a slog recorder
// (LogRecorder), the test binaries built once (Build), and, on Linux, the
// process table as /proc shows it (Proc).
//
// It imports nothing from the module, so that every package's tests can use
// it. docs/testing.md says how the tests are built on it.
package testutil
