//go:build !linux

package main

import "os"

// notDumpable has no equivalent here.
func notDumpable() error { return nil }

// helperExe is this binary; the helper is Linux-only, so it is never run.
func helperExe() (string, error) { return os.Executable() }
