//go:build !wine || !windows

package testutil

// Wine is true in the test binaries built for Wine (`-tags wine`, by
// .ci/wine-test), which run Windows code on Linux.
const Wine = false
