//go:build race

package testutil

// Race is true when the tests run with -race: the binaries they start are
// then built with -race too (Build), so that end-to-end runs
// catch data races in them.
const Race = true
