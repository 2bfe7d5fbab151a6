//go:build unix

package responses

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// rawSocket is a TCP socket read with its own system calls, so that its
// receive low-water mark (SO_RCVLOWAT) can stay raised while reads find
// data and come down only before one waits. Used by one goroutine.
type rawSocket struct {
	rc   syscall.RawConn
	held bool // SO_RCVLOWAT is raised
}

// heldMark is the raised low-water mark: more than a batch of deltas
// (Linux caps it at half the socket's largest receive buffer).
const heldMark = 1 << 20

func sockOf(conn net.Conn) socket {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return &rawSocket{rc: rc}
}

func (s *rawSocket) mark(n int) {
	s.rc.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
	})
}

func (s *rawSocket) hold() {
	if !s.held {
		s.mark(heldMark)
		s.held = true
	}
}

func (s *rawSocket) read(p []byte) (n int, err error) {
	rerr := s.rc.Read(func(fd uintptr) bool {
		n, err = readNow(int(fd), p)
		if errors.Is(err, syscall.EAGAIN) {
			if s.held {
				// Lowered before the wait: data that came in between
				// marks the socket ready, and the wait ends at once.
				s.mark(1)
				s.held = false
			}
			return false
		}
		if errors.Is(err, syscall.EINTR) {
			return false
		}
		return true
	})
	switch {
	case rerr != nil:
		return 0, rerr
	case err != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}
