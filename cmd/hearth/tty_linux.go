package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal (a TCGETS that succeeds).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// noEcho turns f's echo off (a terminal: the key typed at `hearth login`
// is not shown); restore puts it back.
func noEcho(f *os.File) (restore func(), err error) {
	return termiosNoEcho(f, unix.TCGETS, unix.TCSETS)
}
