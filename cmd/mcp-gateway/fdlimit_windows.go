package main

// openFileLimit is 0 on Windows: a process's handles are limited only by
// memory (about 16 million).
func openFileLimit() uint64 { return 0 }
