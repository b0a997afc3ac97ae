package main

import "golang.org/x/sys/unix"

// noEcho turns the terminal's echo off (the caller restores its state).
func noEcho(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	t.Iflag |= unix.ICRNL
	return unix.IoctlSetTermios(fd, unix.TCSETS, t)
}
