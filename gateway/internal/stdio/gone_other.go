//go:build !unix

package stdio

import "io"

// writerGone cannot tell without writing on this OS; a failed write tells.
func writerGone(io.Writer) bool { return false }
