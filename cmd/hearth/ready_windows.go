//go:build windows

package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"time"
)

// startedDaemon is a daemon this process started. Windows passes no extra
// descriptors to a child, so readiness is learnt by dialling the socket.
type startedDaemon struct{}

// startReady runs cmd (`hearth __spawn serve …`), which starts the daemon
// and exits at once.
func startReady(cmd *exec.Cmd) (*startedDaemon, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	cmd.Wait() // a failure is in the start log; wait times out on the socket
	return &startedDaemon{}, nil
}

// wait dials the socket with a doubling backoff (1 ms to 50 ms) until it
// answers or ctx ends.
func (s *startedDaemon) wait(ctx context.Context, socket string) error {
	backoff := time.Millisecond
	for {
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close()
			return nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// readyFile: Windows passes no extra descriptors, so --ready-fd is refused.
func readyFile(fd int) (*os.File, error) {
	if fd < 0 {
		return nil, nil
	}
	return nil, errors.New("--ready-fd is not supported on Windows")
}
