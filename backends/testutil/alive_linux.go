package testutil

// Alive reports whether pid is a live process (not a zombie).
func Alive(pid int) bool {
	p, ok := ReadProc(pid)
	return ok && p.State != 'Z'
}
