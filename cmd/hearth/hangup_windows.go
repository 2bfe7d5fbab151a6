//go:build windows

package main

import "os"

// notifyHangup: Windows has no SIGHUP; restart the service to reload.
func notifyHangup(chan<- os.Signal) {}
