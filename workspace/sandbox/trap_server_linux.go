//go:build linux && cgo

package sandbox

import "golang.org/x/sys/unix"

// callTrap is the cell server's side of one call's file-change trap: the
// socketpair the call's init sends the trap's listener on. Made by
// newCallTrap before the call is launched, done once listener returns.
type callTrap struct{ pair [2]int }

// newCallTrap sets cmd up to trap the call's file changes when asked and
// this architecture has the filter; otherwise it asks for nothing.
func newCallTrap(asked bool, cmd *callCommand) callTrap {
	t := callTrap{pair: [2]int{-1, -1}}
	if !asked || trapProgram() == nil {
		return t
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return t // the call runs untrapped: the daemon sees no listener
	}
	t.pair = fds
	cmd.trapFD = fds[1]
	return t
}

// listener returns the listener the call's init sent (-1: none, the call
// did not start), after the launch returned: the init sends it before it
// starts the shell, and the launch returns after that. The caller sends it
// on and closes it.
func (t callTrap) listener() int {
	if t.pair[0] < 0 {
		return -1
	}
	unix.Close(t.pair[1])
	defer unix.Close(t.pair[0])
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(t.pair[0], buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || oobn == 0 {
			return -1
		}
		fds, err := parseRights(oob[:oobn])
		if err != nil || len(fds) != 1 {
			closeFDs(fds)
			return -1
		}
		return fds[0]
	}
}

// trapHook is what a cell's call tells of its file changes: the paths
// below root, to changes (nil: the call is not trapped).
type trapHook struct {
	root    string
	changes ChangeHook
}

// watch starts answering the trap's listener, when the started reply
// carried one (fds: what came after the pidfd); nil when the call is not
// trapped.
func (h trapHook) watch(fds []int) *trapWatch {
	if len(fds) == 0 {
		return nil
	}
	if h.changes == nil {
		closeFDs(fds)
		return nil
	}
	w, err := watchTrap(fds[0], h.root, h.changes.Change)
	if err != nil {
		return nil
	}
	h.changes.Trapped()
	return w
}
