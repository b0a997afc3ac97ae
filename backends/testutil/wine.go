//go:build wine && windows

package testutil

import _ "unsafe" // go:linkname

// Wine is true in the test binaries built for Wine (`-tags wine`, by
// .ci/wine-test), which run Windows code on Linux.
const Wine = true

// Wine 8.0 lacks FileDispositionInformationEx, so os.RemoveAll (and with it
// t.TempDir's cleanup) fails there with "Invalid function"; Go falls back
// to the older FileDispositionInformation only for the errors Windows
// gives. Its own tests switch the fallback on through this hook; so do the
// Wine runs (linked with -ldflags=-checklinkname=0).
//
//go:linkname deleteatFallback internal/syscall/windows.TestDeleteatFallback
var deleteatFallback bool

func init() { deleteatFallback = true }
