//go:build race

package main

// raceEnabled builds the binaries under test with -race when the tests
// themselves run with -race, so end-to-end runs catch data races too.
const raceEnabled = true
