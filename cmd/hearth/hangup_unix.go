//go:build !windows

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifyHangup delivers SIGHUP (reload) to c.
func notifyHangup(c chan<- os.Signal) { signal.Notify(c, syscall.SIGHUP) }

// terminate asks a daemon to shut down as the service manager would:
// SIGTERM (running turns get the drain time).
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
