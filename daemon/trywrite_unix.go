//go:build unix

package daemon

import (
	"errors"
	"io"
	"syscall"
)

// rawSocket is an editor connection's socket, written without waiting.
type rawSocket = syscall.RawConn

// rawSocketOf returns rw's socket, or nil when rw is none (a pipe).
func rawSocketOf(rw io.ReadWriteCloser) rawSocket {
	sc, ok := rw.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// TryWrite writes what the editor's socket takes at once (rpc.TryWriter):
// it never waits, so it needs no deadline. ok is false on a connection
// that is no socket.
func (w deadlineWriter) TryWrite(p []byte) (n int, ok bool, err error) {
	if w.c.raw == nil {
		return 0, false, nil
	}
	rerr := w.c.raw.Write(func(fd uintptr) bool {
		n, err = writeNow(int(fd), p)
		return true // never wait for room
	})
	switch {
	case rerr != nil:
		return 0, true, rerr
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR):
		return 0, true, nil
	case err != nil:
		return 0, true, err
	}
	return n, true, nil
}
