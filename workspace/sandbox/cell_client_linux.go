//go:build linux && cgo

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A cell is the daemon's side of one cell server (cellServer): the
// sandbox of one workspace and policy (network and Access), started on the first command that
// needs it and closed after cellIdle without a command, when the sandbox
// configuration changes (Set), or with the daemon (the server dies
// with its parent too). Its reader goroutine owns the socket's receiving
// side and ends when the server does; close waits for it.
type cell struct {
	key     string
	fd      int
	cmd     *exec.Cmd
	release func()

	wmu sync.Mutex // one message at a time

	mu      sync.Mutex // guards waiting, nextID, running, closed, spare, trap
	waiting map[uint64]chan cellMsg
	nextID  uint64
	running int
	idle    *time.Timer
	closed  bool
	spare   *handedSpare // the init the server handed over for the next command, or nil
	trap    int8         // whether the last command was trapped: 0 none yet, 1 no, 2 yes

	spareCame chan struct{} // a token each time a spare comes (cap 1): what tests wait on
	handed    atomic.Int64  // calls started through a handed spare
	direct    atomic.Int64  // of those, the calls the daemon gave the go itself (cell_direct_linux.go)
	retried   atomic.Int64  // spares dropped at the call instead: out-of-date rules, or no command taken
	view      cellView      // what the daemon checks a handed spare against

	dead  chan struct{}  // closed when the reader has ended and the server is reaped
	traps sync.WaitGroup // the calls' trap watches, which end after their calls
}

// cellMsg is one reply and the descriptors it carried.
type cellMsg struct {
	rep cellReply
	fds []int
}

// handedSpare is a call's init the server made ahead and handed over
// (cellReply.Spare): the daemon sends it the command itself, sparing the
// command a wake of the server on its way, and asks the server for the go.
// It lives in cell.spare until a call takes it or the cell closes; the
// descriptors are the daemon's to close.
type handedSpare struct {
	serial                       uint64
	trap                         bool
	cmd, pidfd, status, listener int         // listener -1: none
	gofd                         int         // its go socket, -1: the server's alone
	check                        *spareCheck // what the server saw when it handed it over, with gofd
}

func (h *handedSpare) close() {
	for _, fd := range []int{h.cmd, h.pidfd, h.status, h.listener, h.gofd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// keepSpare keeps the spare a reply hands over, dropping one held before.
func (c *cell) keepSpare(rep cellReply, fds []int) {
	n := 3 // command socket, pidfd, report pipe; then the go socket with a check; then the trap's listener
	if rep.Check != nil {
		n++
	}
	if len(fds) != n && len(fds) != n+1 {
		closeFDs(fds)
		return
	}
	h := &handedSpare{serial: rep.Spare, trap: rep.Trap, cmd: fds[0], pidfd: fds[1], status: fds[2], listener: -1, gofd: -1}
	if rep.Check != nil {
		h.gofd, h.check = fds[3], rep.Check
	}
	if len(fds) == n+1 {
		h.listener = fds[n]
	}
	c.mu.Lock()
	old := c.spare
	c.spare = h
	if c.closed || c.trap != 0 && h.trap != (c.trap == 2) {
		// A spare trapped otherwise than the daemon's commands are is
		// dropped at once: the server makes the next as the last was.
		c.spare, old = nil, h
	}
	c.mu.Unlock()
	if old != nil {
		old.close()
	}
	select {
	case c.spareCame <- struct{}{}:
	default:
	}
}

// takeSpare is the spare the cell holds, or nil, for a command trapped or
// not as trap says.
func (c *cell) takeSpare(trap bool) *handedSpare {
	c.mu.Lock()
	h := c.spare
	c.spare = nil
	c.trap = 1
	if trap {
		c.trap = 2
	}
	c.mu.Unlock()
	if h != nil && h.trap != trap {
		h.close()
		return nil
	}
	return h
}

// cellIdle is how long a cell with no command stays up.
const cellIdle = 10 * time.Minute

// cellStartTimeout bounds a server's set-up (namespaces, mounts, rules).
const cellStartTimeout = 20 * time.Second

// cells are the running cells by policy; failed records policies whose
// cell could not start, so each of their commands does not try again.
var cells struct {
	mu     sync.Mutex // guards m and failed; held while a cell starts
	m      map[string]*cell
	failed map[string]error
	sweep  sync.Once // the first cell first removes what killed daemons' cells left
}

// runInCell runs command through the workspace's cell, starting it when
// needed. ok is false when no cell can run it here (user namespaces
// refused, Landlock missing): the caller runs the per-command helper.
func runInCell(ctx context.Context, sb Config, root, dir, command string, net Network, access Access, env []string, timeout time.Duration, live io.Writer, cio callIO, changes ChangeHook) (Outcome, bool) {
	if len(sb.Helper) == 0 || !landlockWorks() {
		return Outcome{}, false
	}
	c, err := getCell(sb, root, net, access)
	if err != nil {
		return Outcome{}, false
	}
	return c.run(ctx, dir, commandProgram(command, dir, env), timeout, live, cio, trapHook{root: root, changes: changes}), true
}

func getCell(sb Config, root string, net Network, access Access) (*cell, error) {
	pids := sb.Pids
	if pids <= 0 {
		pids = defaultPids()
	}
	args := sb.serveArgs(root, net, access, pids)
	key := strings.Join(args, "\x00")
	cells.mu.Lock()
	defer cells.mu.Unlock()
	if err := cells.failed[key]; err != nil {
		return nil, err
	}
	if c := cells.m[key]; c != nil {
		select {
		case <-c.dead:
		default:
			return c, nil
		}
	}
	c, err := startCell(key, args, net.Off)
	if err != nil {
		if cells.failed == nil {
			cells.failed = map[string]error{}
		}
		cells.failed[key] = err
		return nil, err
	}
	if cells.m == nil {
		cells.m = map[string]*cell{}
	}
	cells.m[key] = c
	return c, nil
}

// closeCells closes every cell and waits for their servers to exit.
func closeCells() {
	cells.mu.Lock()
	all := cells.m
	cells.m, cells.failed = nil, nil
	cells.mu.Unlock()
	for _, c := range all {
		c.close()
	}
}

// startCell starts a server and waits for its hello (the reply with ID 0,
// sent once its namespaces, mounts and rules are set up).
func startCell(key string, args []string, noNet bool) (*cell, error) {
	cells.sweep.Do(sweepStaleCells)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	theirs := os.NewFile(uintptr(fds[1]), "cell")
	defer theirs.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Env = append(currentToolEnv(), cellOwnerEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = cellProcAttr(noNet)
	release, err := startCall(cmd) // its calls are the daemon's to refuse on the socket
	if err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("start the sandbox cell: %w", err)
	}
	theirs.Close() // the server has its end: its death before the hello now reads as EOF, not as a timeout
	c := &cell{key: key, fd: fds[0], cmd: cmd, release: release, waiting: map[uint64]chan cellMsg{}, dead: make(chan struct{}), spareCame: make(chan struct{}, 1)}
	hello := c.expect(0)
	go c.read()
	t := time.NewTimer(cellStartTimeout)
	defer t.Stop()
	select {
	case m, ok := <-hello:
		if ok && m.rep.Err == "" {
			c.idle = time.AfterFunc(cellIdle, c.idleClose)
			return c, nil
		}
		c.close()
		if ok {
			return nil, errors.New(m.rep.Err)
		}
		return nil, errors.New("the sandbox cell ended while starting")
	case <-t.C:
		c.close()
		return nil, errors.New("the sandbox cell did not start in time")
	}
}

// cellProcAttr starts the server in user, mount and pid namespaces of its
// own (its /proc shows the cell's processes, none of the user's others),
// and a network namespace when the network is off. The user namespace
// maps the user's ids to themselves (root maps every id); an ordinary user
// keeps CAP_SYS_ADMIN there across the exec (ambient) to set up mounts and
// pid namespaces. Its own process group keeps it out of the signals sent to
// a command's group; it dies with the daemon.
func cellProcAttr(noNet bool) *syscall.SysProcAttr {
	uid, gid, size := os.Getuid(), os.Getgid(), 1
	if uid == 0 {
		uid, gid, size = 0, 0, math.MaxInt32
	}
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID)
	if noNet {
		flags |= syscall.CLONE_NEWNET
	}
	a := &syscall.SysProcAttr{
		Cloneflags:                 flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: size}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: size}},
		GidMappingsEnableSetgroups: uid == 0,
		Setpgid:                    true,
		Pdeathsig:                  syscall.SIGKILL,
	}
	if uid != 0 {
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	return a
}

// expect registers a reply channel for id; the reader closes it when the
// server is gone. forget drops it once its one reply has come.
func (c *cell) expect(id uint64) chan cellMsg {
	ch := make(chan cellMsg, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	return ch
}

func (c *cell) forget(id uint64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// read hands each reply to its waiter until the socket closes, then fails
// every waiter and reaps the server.
func (c *cell) read() {
	for {
		var m cellMsg
		fds, err := recvCell(c.fd, &m.rep)
		m.fds = fds
		if err != nil {
			closeFDs(fds)
			break
		}
		if m.rep.Spare != 0 {
			c.keepSpare(m.rep, fds)
			continue
		}
		c.mu.Lock()
		ch := c.waiting[m.rep.ID]
		if m.rep.Err != "" || m.rep.ID == 0 {
			delete(c.waiting, m.rep.ID)
		}
		c.mu.Unlock()
		if ch == nil {
			closeFDs(fds)
			continue
		}
		ch <- m
	}
	c.mu.Lock()
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
	c.closed = true
	spare := c.spare
	c.spare = nil
	c.mu.Unlock()
	if spare != nil {
		spare.close()
	}
	unix.Close(c.fd)
	c.view.close() // before the reap: its pid names no other process then
	c.cmd.Wait()
	c.release()
	close(c.dead)
}

// close ends the server (its socket's end makes it kill its calls and
// exit) and waits for it.
func (c *cell) close() {
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	<-c.dead
	c.traps.Wait()
	if c.idle != nil {
		c.idle.Stop()
	}
}

// idleClose runs on the idle timer's goroutine, which ends with it: a cell
// still running a command waits another cellIdle.
func (c *cell) idleClose() {
	c.mu.Lock()
	busy := c.running > 0
	c.mu.Unlock()
	if busy {
		c.idle.Reset(cellIdle)
		return
	}
	cells.mu.Lock()
	if cells.m[c.key] == c {
		delete(cells.m, c.key)
	}
	cells.mu.Unlock()
	c.close()
}

// run runs one command in the cell, as runCommand does for a process of
// its own: output into cio.out (read from cio.read, copied to live), stdin
// cio.in (/dev/null when nil), SIGTERM to the call on timeout or cancel
// (its init then ends every process of the call within KillGrace),
// SIGKILL when even that does not end it. With trap.changes, the call's
// file changes in trap.root are told there first (trap_linux.go).
func (c *cell) run(ctx context.Context, dir string, prog program, timeout time.Duration, live io.Writer, cio callIO, trap trapHook) Outcome {
	pr := cio.read
	defer pr.Close()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cio.close()
		return Outcome{Err: errCellClosed}
	}
	c.nextID++
	id := c.nextID
	c.running++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
	}()
	output := readOutput(pr, live)
	cmd := callCommand{dir: dir, path: prog.path, argv: prog.argv, env: prog.env, tty: cio.tty, outFD: int(cio.out.Fd()), inFD: -1}
	if cio.in != nil {
		cmd.inFD = int(cio.in.Fd())
	}
	fds, err := c.start(id, cmd, trap.changes != nil && trapReadable())
	cio.close() // the call holds them now
	if err != nil {
		pr.Close()
		<-output.done
		return Outcome{Err: err}
	}
	pidfd := fds[0]
	defer unix.Close(pidfd)
	ends := watchEnd(fds[1], pidfd)
	watch := trap.watch(fds[2:], &c.traps)

	var run Outcome
	end := awaitCall(ctx, ends, pidfd, timeout, &run)
	if watch != nil {
		watch.end() // every process of the call is gone: nothing is left to trap
		run.Trapped = true
		run.Untouched = end.err == "" && watch.trapped.Load() == 0
	}
	run.Output, run.Escaped = output.finish()
	run.Total = output.out.total
	switch {
	case end.err != "":
		run.Err = errors.New(end.err)
	case end.status >= 0:
		ws := syscall.WaitStatus(end.status)
		if ws.Signaled() {
			run.Signal, run.signum = ws.Signal().String(), int(ws.Signal())
			run.ExitCode = -1
		} else {
			run.ExitCode = ws.ExitStatus()
		}
	default:
		run.ExitCode = -1
	}
	return run
}

// start starts cmd in the cell and returns the call's pidfd, the read
// end of its init's report pipe and, when trapped, the trap's listener:
// through the spare the server handed over when the cell holds one fit for
// the call, else in full through the server.
func (c *cell) start(id uint64, cmd callCommand, trap bool) ([]int, error) {
	if fds, ok, err := c.startHanded(id, cmd, trap); ok {
		return fds, err
	}
	replies := c.expect(id)
	fds := []int{cmd.outFD}
	if cmd.inFD >= 0 {
		fds = append(fds, cmd.inFD)
	}
	c.wmu.Lock()
	err := sendCell(c.fd, cellRequest{ID: id, Dir: cmd.dir, Path: cmd.path, Argv: cmd.argv, Env: cmd.env, TTY: cmd.tty, Trap: trap}, fds...)
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return nil, fmt.Errorf("the sandbox cell: %w", err)
	}
	first, ok := <-replies
	c.forget(id) // the end comes on the init's report pipe
	if !ok || first.rep.Err != "" || len(first.fds) < 2 || len(first.fds) > 3 {
		closeFDs(first.fds)
		if ok && first.rep.Err != "" {
			return nil, errors.New(first.rep.Err)
		}
		return nil, errCellClosed
	}
	return first.fds, nil
}

// devNull is the daemon's /dev/null, the stdin of a command given none.
var devNull = sync.OnceValues(func() (int, error) {
	return unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
})

// startHanded sends cmd to the spare the cell holds, when it is trapped
// as the call asks, and asks the server for the go: the request first, as
// the server's checks are the longer way to the command's start. ok is
// false when the call must go in full instead: no spare, or one the
// server dropped (its rules are out of date) or that took no command.
func (c *cell) startHanded(id uint64, cmd callCommand, trap bool) (fds []int, ok bool, err error) {
	h := c.takeSpare(trap)
	if h == nil {
		return nil, false, nil
	}
	defer func() {
		if !ok || err != nil {
			h.close() // its init exits without running anything
		}
	}()
	msg, err := commandMessage(cmd)
	if err != nil {
		return nil, true, err
	}
	in := cmd.inFD
	if in < 0 {
		if in, err = devNull(); err != nil {
			return nil, false, nil
		}
	}
	// The command first: the init sets it up while the go is decided.
	sent := sendCommand(h.cmd, msg, cmd.outFD, in) == nil // else its init is gone
	unix.Close(h.cmd)
	h.cmd = -1
	if sent && h.check != nil && c.view.fresh(c.cmd.Process.Pid, h.check) {
		ok = goAhead(h.gofd)
		unix.Close(h.gofd)
		h.gofd = -1
		if ok {
			c.handed.Add(1)
			c.direct.Add(1)
			return h.callFDs(), true, nil
		}
		return nil, false, nil // the init is gone: the command goes in full
	}
	if h.gofd >= 0 {
		unix.Close(h.gofd) // the server's go alone from here
		h.gofd = -1
	}
	replies := c.expect(id)
	c.wmu.Lock()
	err = sendCell(c.fd, cellRequest{ID: id, Spare: h.serial})
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return nil, true, fmt.Errorf("the sandbox cell: %w", err)
	}
	rep, got := <-replies
	c.forget(id)
	closeFDs(rep.fds)
	switch {
	case !got:
		return nil, true, errCellClosed
	case rep.rep.Err != "":
		return nil, true, errors.New(rep.rep.Err)
	case rep.rep.Retry || !sent:
		c.retried.Add(1)
		return nil, false, nil
	}
	c.handed.Add(1)
	return h.callFDs(), true, nil
}

// callFDs are the descriptors of a started call, as the server's reply to
// a full request hands them: pidfd, report pipe, trap listener if any.
func (h *handedSpare) callFDs() []int {
	fds := []int{h.pidfd, h.status}
	if h.listener >= 0 {
		fds = append(fds, h.listener)
	}
	return fds
}

// awaitCall waits for the call's end. On timeout or cancel (marked in run)
// it sends the call's init SIGTERM, which ends the call within KillGrace,
// and SIGKILL, which ends it at once, should even that not come in time.
func awaitCall(ctx context.Context, ends <-chan callEnd, pidfd int, timeout time.Duration, run *Outcome) callEnd {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case end := <-ends:
		return end
	case <-timer.C:
		run.TimedOut = true
	case <-ctx.Done():
		run.Cancelled = true
	}
	unix.PidfdSendSignal(pidfd, unix.SIGTERM, nil, 0)
	backstop := time.NewTimer(KillGrace + helperSlack)
	defer backstop.Stop()
	select {
	case end := <-ends:
		return end
	case <-backstop.C:
		unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
		return <-ends
	}
}

// callEnd is what ended a call: the shell's wait status (-1: it was still
// running when the call was ended), or why the call has none.
type callEnd struct {
	status int
	err    string
}

// watchEnd reads a call's end from its init's report pipe, status (which
// it closes), on a goroutine that lasts as long as the call: the end comes
// once nothing of the call is left — at the report, or, when the report
// says processes were left (or none came: the init was killed), at the
// init's exit, which ends what is left of its pid namespace. The init
// always exits (awaitCall's SIGKILL, the cell's death), so the goroutine
// always ends, and awaitCall always receives.
func watchEnd(status, pidfd int) <-chan callEnd {
	ch := make(chan callEnd, 1)
	// Read through the runtime's poller, not a read that blocks its
	// thread: a thread blocked in a system call for the command's whole
	// run has the runtime's monitor wake every few dozen microseconds to
	// take its processor back, on the CPUs the command runs on.
	unix.SetNonblock(status, true)
	report := os.NewFile(uintptr(status), "report")
	go func() {
		defer report.Close()
		var buf [8]byte
		n, _ := io.ReadFull(report, buf[:])
		kind, v := int32(le32(buf[:4])), int32(le32(buf[4:]))
		end := callEnd{status: -1}
		switch {
		case n != 8:
			end.err = "the call's init ended without a report"
		case kind == 1:
			end.err = fmt.Sprintf("cannot %s: %v", callSetupSteps[int(v)>>16], syscall.Errno(v&0xffff))
		default:
			end.status = int(v)
		}
		if n != 8 || kind == 2 {
			waitExit(pidfd)
		}
		ch <- end
	}()
	return ch
}

// waitExit returns once the process of pidfd has exited.
func waitExit(pidfd int) {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}
