package daemon

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync/atomic"

	"github.com/hearthd/hearth/safesocket"
	"github.com/hearthd/hearth/workspace/sandbox"
)

// Nothing a tool call starts may drive the daemon: a command the model
// runs that connected to the socket could otherwise speak ACP as the user —
// open a session outside its sandbox, approve its own permission requests,
// switch a session to full-auto. So each connection accepted on the socket
// is checked against the shell calls running (sandbox.CallPIDs): when the
// process that connected has a call's leader (its sandbox helper, the
// call's child subreaper) among its ancestors, the connection is closed
// before anything is read from it. Where the check cannot be made while
// calls run — the connecting process already exited, or lives in a pid
// namespace the daemon cannot see — the connection is refused too: an
// editor waits for its answers, and a connection that may be a call's is
// not worth the risk. With no call running there is nothing to check.

// maxAncestry bounds the walk up a process's parents.
const maxAncestry = 1 << 12

// errAncestryChanged: a process of the chain exited, or its pid was taken
// by a newer process, while the chain was read; it is read again.
var errAncestryChanged = errors.New("the process's ancestry changed while it was read")

// admission decides which connections accepted on the socket are served,
// and counts those refused as (maybe) a tool call's. One per daemon, the
// Daemon's field, for its lifetime; Serve asks it of each connection.
type admission struct {
	log          *slog.Logger
	refusedCalls atomic.Int64 // connections refused as (maybe) a tool call's
}

// admit decides whether a connection accepted on the socket is served:
// the peer runs as the daemon's user (safesocket.CheckPeer) and belongs to
// no tool call (callPeer). A refused connection gets no answer; the caller
// closes it.
func (a *admission) admit(c net.Conn) bool {
	if err := safesocket.CheckPeer(c); err != nil {
		a.log.Warn("refused connection", "err", err)
		return false
	}
	leader, err := callPeer(c)
	switch {
	case err != nil:
		a.refusedCalls.Add(1)
		a.log.Info("refused a connection while commands run: cannot tell whether a command made it", "err", err)
		return false
	case leader != 0:
		a.refusedCalls.Add(1)
		a.log.Info("refused a connection from a command the model runs", "call", leader)
		return false
	}
	return true
}

// callPeer is the pid of the running shell call (its leader) whose process
// connected c, or 0 when it is none's; an error when that cannot be told
// while calls run. A connection that is not a unix socket's (stdio, a
// pipe), and any connection on an OS where the peer's pid is not read, is
// none's.
func callPeer(c net.Conn) (int, error) {
	calls := sandbox.CallPIDs() // after the connect: every call forked before it is here
	if len(calls) == 0 {
		return 0, nil
	}
	p, ok, err := safesocket.PeerProcess(c)
	if !ok {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer p.Close()
	if p.PID <= 0 {
		return 0, errors.New("the peer's pid is not visible from the daemon's pid namespace")
	}
	leader, err := callAncestor(p.PID, calls, os.Getpid(), safesocket.ProcParent)
	if err != nil || leader != 0 {
		return leader, err
	}
	if !p.Alive() {
		return 0, fmt.Errorf("process %d exited before its ancestry was read", p.PID)
	}
	return 0, nil
}

// callAncestor walks pid's ancestry (pid itself first) up to init or the
// daemon (self), and returns the first of calls in it, or 0. parent reads
// one process. A chain that changes while it is read (a parent exits and
// its child is reparented, a pid is reused) is read again, up to three
// times; a pid that cannot be read at all is an error.
func callAncestor(pid int, calls map[int]bool, self int, parent func(int) (safesocket.ProcInfo, error)) (int, error) {
	for range 3 {
		leader, err := walkAncestry(pid, calls, self, parent)
		if !errors.Is(err, errAncestryChanged) {
			return leader, err
		}
	}
	return 0, fmt.Errorf("process %d: %w, three times", pid, errAncestryChanged)
}

func walkAncestry(pid int, calls map[int]bool, self int, parent func(int) (safesocket.ProcInfo, error)) (int, error) {
	info, err := parent(pid)
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	for range maxAncestry {
		if calls[pid] {
			return pid, nil
		}
		if pid == self || info.PPID <= 1 {
			return 0, nil
		}
		up, err := parent(info.PPID)
		if err != nil || up.Start > info.Start {
			return 0, errAncestryChanged
		}
		pid, info = info.PPID, up
	}
	return 0, fmt.Errorf("process %d: more than %d ancestors", pid, maxAncestry)
}

// callConn says why an editor's connection rw belongs to a running tool
// call (or may: it cannot be told), or "" when it does not.
func callConn(rw io.ReadWriteCloser) string {
	nc, ok := rw.(net.Conn)
	if !ok {
		return ""
	}
	switch leader, err := callPeer(nc); {
	case err != nil:
		return err.Error()
	case leader != 0:
		return fmt.Sprintf("its process descends from the call %d", leader)
	}
	return ""
}
