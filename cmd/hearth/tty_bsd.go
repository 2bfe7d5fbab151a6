//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal (a TIOCGETA that succeeds).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TIOCGETA)
	return err == nil
}

// noEcho turns f's echo off (a terminal: the key typed at `hearth login`
// is not shown); restore puts it back.
func noEcho(f *os.File) (restore func(), err error) {
	return termiosNoEcho(f, unix.TIOCGETA, unix.TIOCSETA)
}
