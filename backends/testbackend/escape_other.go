//go:build !unix

package main

import "errors"

func startEscapee() (int, error) { return 0, errors.New("-escape is Unix only") }
