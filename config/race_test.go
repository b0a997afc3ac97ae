//go:build race

package config

// raceEnabled shrinks the largest inputs under the race detector, which
// makes the loader about ten times slower.
const raceEnabled = true
