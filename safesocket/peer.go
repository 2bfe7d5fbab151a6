package safesocket

import (
	"fmt"
	"net"
	"os"
)

// CheckPeer refuses a unix-socket peer running as another user.
func CheckPeer(c net.Conn) error {
	uid, ok, err := peerUID(c)
	if err != nil || !ok {
		return err
	}
	if uid != os.Getuid() {
		return fmt.Errorf("peer uid %d is not the daemon's uid %d", uid, os.Getuid())
	}
	return nil
}

// Peer is the process at the other end of a connection (PeerProcess),
// until Close: on Linux it may hold a pidfd of that process.
type Peer struct {
	PID   int // 0: not visible from this process's pid namespace
	pidfd int // -1: no pidfd (before Linux 6.5, and off Linux)
}

// ProcInfo is what an ancestry walk reads of one process (ProcParent): a
// value, read once.
type ProcInfo struct {
	PPID  int
	Start uint64 // start time, in the OS's unit: a parent starts no later than its child
}
