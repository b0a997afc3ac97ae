package sandbox

// hostCaps: the server's Job Object (backends/internal/proc) bounds its
// memory and its processes; files and the network are not confined on
// Windows (docs/sandbox.md says why).
func hostCaps(Host) caps {
	const fs = "not on Windows yet: a restricted token would deny the user's profile, but the state directory, each read and write path and the runtime's caches need an access-list grant to it first (not done)"
	const net = "not on Windows: neither a restricted token nor a Job Object governs sockets; an AppContainer without network capabilities does, but reads only files granted to it, and filtering by port (Windows Filtering Platform) needs an administrator"
	return caps{fs: fs, netNone: net, netList: net}
}

// finish has nothing to add: nothing is applied through the plan.
func finish(*Plan, *Applied, Host, []string, uint16) {}

// systemDirs and devices are not used: files are not confined.
var systemDirs, devices []string
