//go:build unix && !linux

package proc

// reapAdopted is Linux only, where the gateway is a subreaper: elsewhere
// it adopts no process.
func reapAdopted(int) {}
