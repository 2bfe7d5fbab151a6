package sandbox

import (
	"os/exec"
	"sync"
)

// callPIDs holds the pids of the processes the shell tool of this process
// started and has not reaped yet: the sandbox helper of each running call
// (or /bin/sh, without one). Every process a call starts has one of them
// among its ancestors while the call runs — on Linux, where the helper is
// the call's child subreaper, even those that left the call's session and
// process group — so the daemon can tell a connection from a call
// (CallPIDs). A pid stays in the set until its process is reaped, so the
// number cannot name another process meanwhile.
var callPIDs struct {
	mu   sync.RWMutex // held for writing across a start: CallPIDs waits for the pid
	pids map[int]struct{}
}

// startCall starts cmd and records its pid until the returned release is
// called, which must be after cmd is reaped. Start and record happen under
// the lock CallPIDs takes, so no process of the call runs before its
// leader is in the set.
func startCall(cmd *exec.Cmd) (release func(), err error) {
	callPIDs.mu.Lock()
	defer callPIDs.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	if callPIDs.pids == nil {
		callPIDs.pids = map[int]struct{}{}
	}
	callPIDs.pids[pid] = struct{}{}
	return func() {
		callPIDs.mu.Lock()
		delete(callPIDs.pids, pid)
		callPIDs.mu.Unlock()
	}, nil
}

// CallPIDs returns the pids of the running shell calls' leaders (nil when
// none runs): a process with one of them among its ancestors belongs to a
// call. A start in progress finishes first, so any process forked before
// CallPIDs was called has its call's leader in the answer.
func CallPIDs() map[int]bool {
	callPIDs.mu.RLock()
	defer callPIDs.mu.RUnlock()
	if len(callPIDs.pids) == 0 {
		return nil
	}
	out := make(map[int]bool, len(callPIDs.pids))
	for pid := range callPIDs.pids {
		out[pid] = true
	}
	return out
}
