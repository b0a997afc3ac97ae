//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly && !windows

package main

import "errors"

// noEcho is not done here: a secret cannot be asked for without echo.
func noEcho(int) error {
	return errors.New("cannot turn the terminal's echo off on this system: give secrets with --env or --header")
}
