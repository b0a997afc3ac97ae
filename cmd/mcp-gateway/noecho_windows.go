package main

import "golang.org/x/sys/windows"

// noEcho turns the console's echo off (the caller restores its state).
func noEcho(fd int) error {
	h := windows.Handle(fd)
	var mode uint32
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return err
	}
	mode &^= windows.ENABLE_ECHO_INPUT
	mode |= windows.ENABLE_PROCESSED_INPUT | windows.ENABLE_LINE_INPUT
	return windows.SetConsoleMode(h, mode)
}
