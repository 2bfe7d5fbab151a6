package safesocket

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// xucredVersion is XUCRED_VERSION from <sys/ucred.h>, which x/sys/unix does
// not export: the layout of unix.Xucred.
const xucredVersion = 0

// peerUID is the effective uid of the process on the other end of a unix
// socket, recorded when it connected; ok is false for a connection that is
// not a unix socket. macOS has no SO_PEERCRED; LOCAL_PEERCRED is what
// getpeereid(3) reads.
func peerUID(c net.Conn) (uid int, ok bool, err error) {
	uc, isUnix := c.(*net.UnixConn)
	if !isUnix {
		return 0, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return 0, false, fmt.Errorf("peer credentials: %w", cerr)
	}
	if cred.Version != xucredVersion {
		return 0, false, fmt.Errorf("peer credentials: unknown xucred version %d", cred.Version)
	}
	return int(cred.Uid), true, nil
}

// PeerProcess identifies the process that connected c: its pid, recorded
// at connect(2) (LOCAL_PEERPID). macOS has no pidfd: Alive cannot tell a
// reused pid. ok is false for a connection that is not a unix socket.
func PeerProcess(c net.Conn) (p Peer, ok bool, err error) {
	uc, isUnix := c.(*net.UnixConn)
	if !isUnix {
		return Peer{}, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Peer{}, true, fmt.Errorf("peer pid: %w", err)
	}
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		p.PID, cerr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return Peer{}, true, fmt.Errorf("peer pid: %w", err)
	}
	if cerr != nil {
		return Peer{}, true, fmt.Errorf("peer pid: %w", cerr)
	}
	p.pidfd = -1
	return p, true, nil
}

func (p Peer) Alive() bool { return true }
func (p Peer) Close()      {}

// ProcParent reads pid's parent and start time (microseconds since the
// epoch) with sysctl kern.proc.pid.
func ProcParent(pid int) (ProcInfo, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return ProcInfo{}, fmt.Errorf("process %d: %w", pid, err)
	}
	if int(kp.Proc.P_pid) != pid {
		return ProcInfo{}, fmt.Errorf("process %d: gone", pid)
	}
	tv := kp.Proc.P_starttime
	return ProcInfo{PPID: int(kp.Eproc.Ppid), Start: uint64(tv.Sec)*1e6 + uint64(tv.Usec)}, nil
}
