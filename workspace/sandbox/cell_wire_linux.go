//go:build linux && cgo

package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// The daemon and a cell server talk over a unix stream socketpair: each
// message is a 4-byte little-endian length, then that much JSON; the
// descriptors a message carries ride on its first bytes (SCM_RIGHTS).

// cellRequest asks the server to run one command. Its descriptors are
// where the command writes its output (a pipe's write end, or a pty's
// slave) and, when there is a second, its stdin (else /dev/null). With
// TTY the shell starts a session of its own whose controlling terminal is
// its stdin.
type cellRequest struct {
	ID   uint64   `json:"id"`
	Dir  string   `json:"dir"`
	Path string   `json:"path"` // the program to exec, argv[0] when ""
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	TTY  bool     `json:"tty,omitempty"`
	// Trap asks for the call's file changes (trap_linux.go): the reply
	// then carries the trap's listener last.
	Trap bool `json:"trap,omitempty"`
	// Spare asks for the go of the spare the server handed over with this
	// serial, which the daemon has sent the command itself: the request
	// carries no command and no descriptors, its reply none either.
	Spare uint64 `json:"spare,omitempty"`
}

// cellReply answers a request as its init is handed the command, carrying
// the init's pidfd and the read end of its report pipe (the call's end, or
// why it did not start: the caller reads it, watchEnd), or Err.
//
// A reply with Spare (and no ID) hands the daemon a spare init: its
// command socket, pidfd, report pipe and, when Trap, the trap's listener.
// Retry answers a request for a spare's go: the spare is dropped (its
// rules are out of date, or it is gone), the command must come in full.
type cellReply struct {
	ID    uint64 `json:"id"`
	Pid   int    `json:"pid,omitempty"`
	Err   string `json:"err,omitempty"`
	Spare uint64 `json:"spare,omitempty"`
	Trap  bool   `json:"trap,omitempty"`
	Retry bool   `json:"retry,omitempty"`
	// Check, on a handed spare, lets the daemon give its go itself (the go
	// socket comes after the report pipe): cell_direct_linux.go.
	Check *spareCheck `json:"check,omitempty"`
}

// maxCellMessage bounds one message: a command line and its environment.
const maxCellMessage = 16 << 20

// maxCellFDs bounds the descriptors one message carries: a handed spare's
// five (command socket, pidfd, report pipe, go socket, trap listener).
// The kernel closes those past the room a receiver gave, so the room is
// this with some to spare.
const maxCellFDs = 8

// sendCell writes v with fds on the socket fd.
func sendCell(fd int, v any, fds ...int) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	msg := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(body)), uint32(len(body)))
	msg = append(msg, body...)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for len(msg) > 0 {
		n, err := unix.SendmsgN(fd, msg, oob, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		msg, oob = msg[n:], nil
	}
	return nil
}

// recvCell reads one message into v and returns the descriptors it
// carried (close-on-exec). io.EOF-like ends come back as errCellClosed.
func recvCell(fd int, v any) ([]int, error) {
	head := make([]byte, 4)
	oob := make([]byte, unix.CmsgSpace(maxCellFDs*4))
	var fds []int
	for got := 0; got < 4; {
		n, oobn, flags, _, err := unix.Recvmsg(fd, head[got:], oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fds, err
		}
		if n == 0 {
			return fds, errCellClosed
		}
		if flags&unix.MSG_CTRUNC != 0 {
			fs, _ := parseRights(oob[:oobn])
			return append(fds, fs...), fmt.Errorf("a message carried more than %d descriptors", maxCellFDs)
		}
		if oobn > 0 {
			fs, err := parseRights(oob[:oobn])
			if err != nil {
				return fds, err
			}
			fds = append(fds, fs...)
		}
		got += n
	}
	size := binary.LittleEndian.Uint32(head)
	if size > maxCellMessage {
		return fds, fmt.Errorf("a message of %d bytes", size)
	}
	body := make([]byte, size)
	for got := 0; got < len(body); {
		n, err := unix.Read(fd, body[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fds, err
		}
		if n == 0 {
			return fds, errCellClosed
		}
		got += n
	}
	return fds, json.Unmarshal(body, v)
}

var errCellClosed = errors.New("the sandbox cell closed its socket")

// commandMessage is cmd as a call's init reads it (recv_command): a head of
// four little-endian uint32s (the size of what follows, the count of
// arguments, of variables, and whether stdin is a terminal), then the
// directory, the program, the arguments and the variables, each ending in
// a NUL.
func commandMessage(cmd callCommand) ([]byte, error) {
	if len(cmd.argv) == 0 {
		return nil, errors.New("a command without arguments")
	}
	n := len(cmd.dir) + len(cmd.path) + 2
	for _, ss := range [][]string{cmd.argv, cmd.env} {
		for _, s := range ss {
			n += len(s) + 1
		}
	}
	if n > maxCommand {
		return nil, fmt.Errorf("a command of %d bytes: the most is %d", n, maxCommand)
	}
	tty := uint32(0)
	if cmd.tty {
		tty = 1
	}
	b := make([]byte, 16, 16+n)
	binary.LittleEndian.PutUint32(b, uint32(n))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(cmd.argv)))
	binary.LittleEndian.PutUint32(b[8:], uint32(len(cmd.env)))
	binary.LittleEndian.PutUint32(b[12:], tty)
	for _, s := range append([]string{cmd.dir, cmd.path}, append(cmd.argv, cmd.env...)...) {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, fmt.Errorf("a NUL byte in the command: %q", s)
		}
		b = append(append(b, s...), 0)
	}
	return b, nil
}

// maxCommand bounds a command's bytes (MAX_COMMAND in the init).
const maxCommand = 16 << 20

// sendCommand writes a commandMessage to a call's command socket, its first
// bytes carrying out and in (the command's output and stdin).
func sendCommand(fd int, msg []byte, out, in int) error {
	oob := unix.UnixRights(out, in)
	for len(msg) > 0 {
		n, err := unix.SendmsgN(fd, msg, oob, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("hand the call its command: %w", err)
		}
		msg, oob = msg[n:], nil
	}
	return nil
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		fs, err := unix.ParseUnixRights(&m)
		if err != nil {
			return fds, err
		}
		fds = append(fds, fs...)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
