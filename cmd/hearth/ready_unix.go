//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// startedDaemon is a daemon this process started, from startReady until
// wait returns: it holds the read end of a pipe whose write end only the
// daemon has.
type startedDaemon struct{ r *os.File }

// startReady starts cmd (`hearth __spawn serve …`) with the write end of a
// pipe as --ready-fd, and waits for it: it hands the pipe to the daemon it
// starts and exits at once. The daemon writes a byte once it listens
// (serve.go, signalReady) and closes it; a daemon that dies first closes it
// by exiting. No timer, no polling.
func startReady(cmd *exec.Cmd) (*startedDaemon, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Args = append(cmd.Args, "--ready-fd", strconv.Itoa(readyFD))
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close() // once the middle process is gone, the daemon's copy is the only one: its exit means EOF
	if err != nil {
		r.Close()
		return nil, err
	}
	// The middle process exits as soon as the daemon is started; one that
	// failed said why in the start log, and the pipe's EOF reports it.
	cmd.Wait()
	return &startedDaemon{r: r}, nil
}

// wait returns nil once the daemon says it listens, a *startFailure with
// its own error when it says it failed (tellStarter), errDaemonExited when
// it exited without a word, or ctx's error. It closes the pipe; the reading
// goroutine ends before it returns (closing an os.Pipe end unblocks a read).
func (s *startedDaemon) wait(ctx context.Context, _ string) error {
	done := make(chan error, 1)
	go func() {
		var b [1]byte
		n, err := s.r.Read(b[:])
		switch {
		case n == 1 && b[0] == '\n':
			done <- nil
		case n == 1:
			done <- readFailure(b[0], s.r)
		case errors.Is(err, io.EOF):
			done <- errDaemonExited
		default:
			done <- fmt.Errorf("readiness pipe: %w", err)
		}
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		s.r.Close()
		<-done
		return ctx.Err()
	}
	s.r.Close()
	return err
}

// readyFile opens the descriptor `serve --ready-fd` names (nil for -1) and
// marks it close-on-exec, so no command the daemon runs inherits it: the
// starter's EOF must mean that this daemon is gone.
func readyFile(fd int) (*os.File, error) {
	if fd < 0 {
		return nil, nil
	}
	if fd < 3 {
		return nil, fmt.Errorf("--ready-fd %d: want an inherited descriptor above 2", fd)
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "ready")
	if f == nil {
		return nil, fmt.Errorf("--ready-fd %d: not a descriptor", fd)
	}
	return f, nil
}
