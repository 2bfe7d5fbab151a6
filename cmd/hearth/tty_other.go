//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import "os"

// isTerminal is false where hearth cannot ask the terminal (Windows): ask
// then refuses permissions unless --yes or --mode allow them.
func isTerminal(*os.File) bool { return false }
