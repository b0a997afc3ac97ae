//go:build !race

package testutil

// Race is true when the tests run with -race.
const Race = false
