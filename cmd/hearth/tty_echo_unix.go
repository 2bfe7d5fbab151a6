//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// termiosNoEcho clears ECHO on f with the platform's get and set requests,
// keeping canonical input (line editing) and signals (Ctrl-C).
func termiosNoEcho(f *os.File, get, set uint) (func(), error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, get)
	if err != nil {
		return nil, err
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, set, &quiet); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(fd, set, old) }, nil
}
