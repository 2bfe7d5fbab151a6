//go:build linux && cgo

package sandbox

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// spareCall is a call's init made ahead of its command: in its pid
// namespace (and user namespace or pids cgroup: its process bound),
// confined by the ruleset of generation gen, under the file-change trap
// when trap, waiting for launch. It lives
// in the cell's spareSlot until a call takes it (its lifetime is then the
// call's) or the cell discards it.
type spareCall struct {
	serial uint64 // names it to the daemon once handed over
	pc     *preparedCall
	bound  callBound
	status int    // the read end of the init's report pipe: the daemon's once the call starts
	gen    uint64 // the ruleset generation it is confined by
	trap   bool   // asked for the trap (pc.trap holds its listener where the filter exists)
}

// spareSlot holds at most one spareCall and at most one goroutine making
// it, so that a command's own time has none of the init's set-up (the
// pid namespace, the process bound, Landlock): once made, the spare is
// handed to the daemon (handOff), which sends it the next command itself;
// a request that finds none takes the ready one or makes its own. The next
// is made shortly after the spare's init has ended (refillSoon). It lives
// as long as the cell server.
type spareSlot struct {
	mu     sync.Mutex // guards the fields below but wg
	ready  *spareCall
	handed map[uint64]*spareCall // the spare the daemon holds, by serial, until its request or its init's end
	making chan struct{}         // closed when the goroutine making one has put it in ready
	soon   *time.Timer           // refillSoon's, pending or fired; nil before the first
	closed bool
	wg     sync.WaitGroup // the making goroutine and discards
}

// refillDelay is how long after a call's end the next spare is made. The
// caller has work of its own then (it reads the output, commits it, sends
// the model its next request), and on a machine of few CPUs an init made at
// that moment takes them from it; the model's answer takes longer than
// this. A call that comes sooner makes its init itself (takeSpare).
const refillDelay = 10 * time.Millisecond

// refillSoon has refill run after refillDelay.
func (s *cellServer) refillSoon() {
	sl := &s.spare
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.closed {
		return
	}
	if sl.soon == nil {
		sl.soon = time.AfterFunc(refillDelay, s.refill)
		return
	}
	sl.soon.Reset(refillDelay)
}

// refill starts making a spare unless one is ready or being made.
func (s *cellServer) refill() {
	sl := &s.spare
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.closed || sl.ready != nil || sl.making != nil || len(sl.handed) > 0 {
		return
	}
	done := make(chan struct{})
	sl.making = done
	sl.wg.Add(1)
	trap := s.trapNext.Load()
	go func() {
		defer sl.wg.Done()
		sp, err := s.prepareSpare(trap)
		sl.mu.Lock()
		if err == nil {
			if sl.closed {
				s.discardSpare(sp)
			} else {
				sl.ready = sp
			}
		}
		sl.making = nil
		close(done)
		sl.mu.Unlock()
		s.handOff()
	}()
}

// handOff hands the ready spare to the daemon: its command socket, pidfd,
// report pipe and trap listener, and, with what the server saw of the
// sockets and the rules (spareCheck), a copy of its go socket. The daemon
// sends the spare a command itself and gives the go itself when nothing
// changed since, else asks the server for it (startHanded): the server
// keeps the go socket and reaps the init whenever it ends. A request that
// comes first takes the spare instead (takeSpare).
func (s *cellServer) handOff() {
	sl := &s.spare
	sl.mu.Lock()
	sp := sl.ready
	if sp == nil || sl.closed {
		sl.mu.Unlock()
		return
	}
	sl.ready = nil
	sl.mu.Unlock()
	// sp is this goroutine's alone until it is in handed: what goes to the
	// daemon is taken off it first, for the daemon's request for it may
	// come as soon as the reply is out.
	check, gofd := s.spareCheck(sp), -1
	if check != nil {
		gofd = sp.pc.gofd // a copy: the server's own still serves startHanded and discard
	}
	cmd, status, trap := sp.pc.cmd, sp.status, sp.pc.trap
	sp.pc.cmd, sp.status, sp.pc.trap = -1, -1, -1
	sl.mu.Lock()
	if sl.closed {
		sl.mu.Unlock()
		sp.pc.cmd, sp.status, sp.pc.trap = cmd, status, trap
		s.discardSpare(sp)
		return
	}
	if sl.handed == nil {
		sl.handed = map[uint64]*spareCall{}
	}
	sl.handed[sp.serial] = sp
	sl.mu.Unlock()
	s.live.Store(sp, sp.pc.pidfd)
	s.calls.Add(1)
	s.reply(cellReply{Spare: sp.serial, Pid: sp.pc.pid, Trap: sp.trap, Check: check}, cmd, sp.pc.pidfd, status, gofd, trap)
	unix.Close(cmd)
	unix.Close(status)
	if trap >= 0 {
		unix.Close(trap)
	}
	go s.await(sp) // after the reply: the pidfd it sent is open until the reap
}

// takeSpare is an init for a call, trapped when trap: the spare when it
// is (waiting for it when it is being made), else one made now. Whether
// its rules are still current is for the caller to check. The next spare
// is made trapped or not as this call is: a daemon asks the same of all
// its calls.
func (s *cellServer) takeSpare(trap bool) (*spareCall, error) {
	s.trapNext.Store(trap)
	sl := &s.spare
	sl.mu.Lock()
	if ch := sl.making; ch != nil {
		sl.mu.Unlock()
		<-ch
		sl.mu.Lock()
	}
	sp := sl.ready
	sl.ready = nil
	sl.mu.Unlock()
	if sp != nil && sp.trap == trap {
		return sp, nil
	}
	if sp != nil {
		s.discardSpare(sp) // the trap was not what this call asks
	}
	return s.prepareSpare(trap)
}

// prepareSpare makes an init confined by the current ruleset, under the
// trap when trap, its report pipe and its process bound.
func (s *cellServer) prepareSpare(trap bool) (*spareCall, error) {
	ruleset, flags, gen, err := s.rulesetCopy()
	if err != nil {
		return nil, fmt.Errorf("build the sandbox rules: %w", err)
	}
	if ruleset >= 0 {
		defer unix.Close(ruleset)
	}
	var status [2]int
	if err := unix.Pipe2(status[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	defer unix.Close(status[1])
	serial := s.seq.Add(1)
	bound, err := s.pids.forCall(serial)
	if err != nil {
		unix.Close(status[0])
		return nil, err
	}
	pc, err := prepareCall(callSpec{
		rulesetFD: ruleset, rulesetFlags: flags,
		ownUserNS: bound.ownUserNS, uid: os.Getuid(), gid: os.Getgid(), nproc: bound.nproc,
		cgroupFD: bound.procsFD, statusFD: status[1], grace: int(KillGrace / time.Millisecond), trap: trap,
	})
	bound.started()
	if err != nil {
		unix.Close(status[0])
		bound.done()
		return nil, err
	}
	return &spareCall{serial: serial, pc: pc, bound: bound, status: status[0], gen: gen, trap: trap}, nil
}

// discardSpare ends a spare that will run nothing and, in the background,
// reaps it and releases its bound.
func (s *cellServer) discardSpare(sp *spareCall) {
	sp.pc.discard()
	if sp.pc.trap >= 0 {
		unix.Close(sp.pc.trap)
	}
	s.spare.wg.Add(1)
	go func() {
		defer s.spare.wg.Done()
		waitInit(sp.pc.pidfd)
		unix.Close(sp.pc.pidfd)
		sp.pc.release()
		unix.Close(sp.status)
		sp.bound.done()
	}()
}

// closeSpare discards the spare, waiting for the one being made, and
// makes no more; it returns once they are reaped.
func (s *cellServer) closeSpare() {
	sl := &s.spare
	sl.mu.Lock()
	sl.closed = true
	ch := sl.making
	if sl.soon != nil {
		sl.soon.Stop() // a refill it runs anyway finds the slot closed
	}
	sl.mu.Unlock()
	if ch != nil {
		<-ch
	}
	sl.mu.Lock()
	sp := sl.ready
	sl.ready = nil
	sl.mu.Unlock()
	if sp != nil {
		s.discardSpare(sp)
	}
	sl.wg.Wait()
}

// waitInit waits for a call's init to exit and reaps it.
func waitInit(pidfd int) {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PIDFD, pidfd, &info, unix.WEXITED, nil) == unix.EINTR {
	}
}

// rulesetCopy is a copy of the current ruleset's descriptor (-1: none),
// which the caller closes, with its flags and generation: the ruleset
// itself may be replaced while the copy is in use.
func (s *cellServer) rulesetCopy() (fd int, flags uint32, gen uint64, err error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	fd, flags, gen, err = s.currentRulesetLocked()
	if err != nil || fd < 0 {
		return fd, flags, gen, err
	}
	fd, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	return fd, flags, gen, err
}
