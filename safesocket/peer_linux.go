package safesocket

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process on the other end of a unix socket
// (SO_PEERCRED); ok is false for a connection that is not a unix socket.
func peerUID(c net.Conn) (uid int, ok bool, err error) {
	uc, isUnix := c.(*net.UnixConn)
	if !isUnix {
		return 0, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", cerr)
	}
	return int(cred.Uid), true, nil
}

// PeerProcess identifies the process that connected c: its pid, recorded
// at connect(2) (SO_PEERCRED), and where the kernel has SO_PEERPIDFD
// (Linux 6.5) a pidfd of that very process, whose Alive says whether the
// pid still names it. ok is false for a connection that is not a unix
// socket.
func PeerProcess(c net.Conn) (p Peer, ok bool, err error) {
	uc, isUnix := c.(*net.UnixConn)
	if !isUnix {
		return Peer{}, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Peer{}, true, fmt.Errorf("peer credentials: %w", err)
	}
	p.pidfd = -1
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		var cred *unix.Ucred
		if cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); cerr != nil {
			return
		}
		p.PID = int(cred.Pid)
		if pfd, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD); err == nil {
			p.pidfd = pfd
		}
	}); err != nil {
		return Peer{}, true, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return Peer{}, true, fmt.Errorf("peer credentials: %w", cerr)
	}
	return p, true, nil
}

// Alive reports whether the connecting process still runs, so that its pid
// was not reused meanwhile; true where there is no pidfd to ask.
func (p Peer) Alive() bool {
	return p.pidfd < 0 || unix.PidfdSendSignal(p.pidfd, 0, nil, 0) == nil
}

func (p Peer) Close() {
	if p.pidfd >= 0 {
		unix.Close(p.pidfd)
	}
}

// ProcParent reads pid's parent and start time (clock ticks since boot)
// from /proc/PID/stat.
func ProcParent(pid int) (ProcInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcInfo{}, err
	}
	// The command name, in parentheses, may hold anything: fields start
	// after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ProcInfo{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ProcInfo{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcInfo{}, fmt.Errorf("/proc/%d/stat: unreadable ppid or start time", pid)
	}
	return ProcInfo{PPID: ppid, Start: start}, nil
}
