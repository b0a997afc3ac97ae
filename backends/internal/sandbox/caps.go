package sandbox

// caps is what this OS can confine a server with, as Prepare needs to
// know it: each field is "" where the OS can apply it, else why it
// cannot. hostCaps (caps_GOOS.go) makes it; finish there completes the
// plan and what status says of it (gaps, the network namespace) for the
// OS's mechanism.
type caps struct {
	fs        string // read and write paths
	netNone   string // network: none
	netList   string // network: a list, through the egress proxy
	memory    string // memory_mb
	processes string // processes
}
