//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import (
	"errors"
	"os"
)

// isTerminal is false where hearth cannot ask the terminal (Windows): ask
// then refuses permissions unless --yes or --mode allow them.
func isTerminal(*os.File) bool { return false }

// noEcho cannot turn echo off here: `hearth login` then reads the key
// from a pipe only.
func noEcho(*os.File) (func(), error) {
	return nil, errors.New("cannot hide what is typed on this system's terminal; pipe the key instead: hearth login < keyfile")
}
