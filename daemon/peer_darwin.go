package daemon

import (
	"fmt"
	"net"
	"os"
	"syscall"

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

func ownerUID(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
