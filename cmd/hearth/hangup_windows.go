//go:build windows

package main

import "os"

// notifyHangup: Windows has no SIGHUP; restart the service to reload.
func notifyHangup(chan<- os.Signal) {}

// terminate stops a daemon; Windows has no SIGTERM, so it is killed.
func terminate(p *os.Process) error { return p.Kill() }
