//go:build linux && cgo

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// cellFD is the server's end of its socketpair with the daemon.
const cellFD = 3

// cellServer runs the commands of one workspace and policy. It lives as
// long as its socket to the daemon: when that closes (the daemon closed
// the cell or died), it kills its calls and exits. The namespaces and
// mounts are set up once, at start; the Landlock ruleset is built once and
// again only when a directory it lists has changed. Each command runs in
// an init cloned from here ahead of it (prepareCall, spareSlot) as pid 1 of
// a pid namespace of its own, which confines itself, waits for the command
// (from the server, or from the daemon, which the spare is handed to) and
// starts the shell once the server has checked the sockets and the rules:
// no binary is executed but the shell, and nothing walks /proc.
type cellServer struct {
	policy helperPolicy
	abi    int
	null   int // /dev/null, the stdin of every call not given one

	wmu sync.Mutex // one message at a time on the socket

	rmu     sync.Mutex // the ruleset and what it was built from
	ruleset int
	flags   uint32
	stamp   string
	split   []string // splitDirs of the policy, as at the last build
	gen     uint64   // counts the rulesets built

	sockets cellSockets

	pids  pidBound
	calls sync.WaitGroup // one per running call's waiter
	spare spareSlot
	live  sync.Map // *spareCall → its init's pidfd, while it runs or is handed over: killAll's
	seq   atomic.Uint64
	// trapNext says whether the next spare is made under the file-change
	// trap: as the last call asked (takeSpare); at first, as a daemon asks.
	trapNext atomic.Bool
}

func serveCell(args []string) int {
	syscall.CloseOnExec(cellFD)
	s := &cellServer{ruleset: -1}
	s.trapNext.Store(trapReadable()) // a daemon traps its sessions' commands where it can read them
	if err := s.setUp(args); err != nil {
		s.reply(cellReply{Err: "the sandbox cell: " + err.Error()}, -1)
		return 126
	}
	defer s.pids.close()
	s.reply(cellReply{}, -1) // hello: ready
	s.refill()
	s.serve()
	return 0
}

// setUp applies the policy in args to this process's fresh namespaces:
// the mounts, the pid bound, the first ruleset.
func (s *cellServer) setUp(args []string) error {
	p, err := parseHelperArgs(append(args, "--", ""))
	if err != nil {
		return err
	}
	s.policy = p
	m := p.mounts()
	// The host's socket table stays open: each call covers what was bound
	// since (refreshSockets); the daemon's /proc entry is gone once the
	// cell has a /proc of its own.
	if s.sockets.table.f, err = os.Open(m.unixTable); err != nil {
		return fmt.Errorf("open the machine's unix socket table: %w", err)
	}
	s.sockets.exempt = m.exempt()
	if err := setupCallMounts(m); err != nil {
		return err
	}
	// /tmp is the workspace's own now: commands write there.
	s.policy.write = append(s.policy.write, "/tmp")
	// A /proc of the cell's pid namespace, before the rules name it: the
	// calls see their cell's processes, none of the user's others.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount the cell's /proc: %w", err)
	}
	if s.null, err = unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return err
	}
	s.abi, _ = landlockABI()
	s.pids = newPidBound(p.pids)
	s.rmu.Lock()
	_, _, _, err = s.currentRulesetLocked()
	s.rmu.Unlock()
	if err != nil {
		s.pids.close()
		return fmt.Errorf("build the rules: %w", err)
	}
	return nil
}

// serve reads requests until the socket closes, then ends every call.
func (s *cellServer) serve() {
	for {
		var req cellRequest
		fds, err := recvCell(cellFD, &req)
		if err != nil {
			closeFDs(fds)
			break
		}
		if req.Spare != 0 {
			closeFDs(fds)
			s.startHanded(req)
			continue
		}
		if len(fds) != 1 && len(fds) != 2 {
			closeFDs(fds)
			s.reply(cellReply{ID: req.ID, Err: "a request needs one or two descriptors, its output and its input"}, -1)
			continue
		}
		in := s.null
		if len(fds) == 2 {
			in = fds[1]
		}
		s.start(req, fds[0], in)
	}
	// The daemon is gone or closed the cell: nothing may outlive it.
	s.closeSpare()
	s.killAll()
	s.calls.Wait()
}

func (s *cellServer) killAll() {
	s.live.Range(func(_, v any) bool {
		unix.PidfdSendSignal(v.(int), unix.SIGKILL, nil, 0)
		return true
	})
}

// start runs one call in a spare init (takeSpare), its stdin in (the
// server's /dev/null or a descriptor of the request's), and answers with
// the init's pidfd; a waiter sends the end and makes the next spare. The
// init is handed the command first and sets it up while the server checks
// the sockets and the rules; the command runs at the go, once they hold.
func (s *cellServer) start(req cellRequest, out, in int) {
	defer unix.Close(out)
	if in != s.null {
		defer unix.Close(in)
	}
	fail := func(err error) { s.reply(cellReply{ID: req.ID, Err: err.Error()}, -1) }
	sp, err := s.takeSpare(req.Trap)
	if err != nil {
		fail(err)
		return
	}
	cmd := callCommand{outFD: out, inFD: in, tty: req.TTY, dir: req.Dir, path: req.Path, argv: req.Argv, env: req.Env}
	if err := sp.pc.launch(cmd); err != nil {
		s.discardSpare(sp)
		fail(err)
		return
	}
	if sp, err = s.checkSpare(sp, cmd, req.Trap); err != nil {
		fail(err)
		return
	}
	listener := sp.pc.trap
	if listener >= 0 {
		defer unix.Close(listener) // the daemon holds it once the reply is sent
	}
	s.live.Store(sp, sp.pc.pidfd)
	// The go first: the daemon reads the call's end from the init's report
	// pipe itself (one process fewer between the command's end and its
	// caller) and sets up its waiters while the command starts; a launch
	// that fails is reported there too.
	sp.pc.goAhead()
	s.reply(cellReply{ID: req.ID, Pid: sp.pc.pid}, sp.pc.pidfd, sp.status, listener)
	unix.Close(sp.status)
	s.calls.Add(1)
	go s.await(sp)
}

// startHanded answers the daemon's request for the go of a spare it was
// handed (handOff) and has sent the command itself: the go once no socket
// needs hiding and the spare's rules are current; Retry when they are not
// (or the spare is gone), and the daemon sends the command in full.
func (s *cellServer) startHanded(req cellRequest) {
	sl := &s.spare
	sl.mu.Lock()
	sp := sl.handed[req.Spare]
	delete(sl.handed, req.Spare) // this request owns its go socket now
	sl.mu.Unlock()
	if sp == nil {
		s.reply(cellReply{ID: req.ID, Retry: true}, -1)
		return
	}
	err := s.refreshSockets()
	var gen uint64
	if err == nil {
		gen, err = s.currentGen()
	}
	switch {
	case err != nil:
		sp.pc.discard()
		s.reply(cellReply{ID: req.ID, Err: err.Error()}, -1)
	case gen != sp.gen:
		sp.pc.discard()
		s.reply(cellReply{ID: req.ID, Retry: true}, -1)
	default:
		sp.pc.goAhead()
		s.reply(cellReply{ID: req.ID, Pid: sp.pc.pid}, -1)
	}
}

// currentGen is the generation of the ruleset for the next call.
func (s *cellServer) currentGen() (uint64, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	_, _, gen, err := s.currentRulesetLocked()
	if err != nil {
		return 0, fmt.Errorf("build the sandbox rules: %w", err)
	}
	return gen, nil
}

// checkSpare returns sp, launched with cmd, when no socket needs hiding
// and the rules it is confined by are current; when they changed, it
// discards sp and returns an init made and launched under the new rules.
func (s *cellServer) checkSpare(sp *spareCall, cmd callCommand, trap bool) (*spareCall, error) {
	err := s.refreshSockets() // a socket bound since the last call that could not be hidden: nothing runs
	var gen uint64
	if err == nil {
		gen, err = s.currentGen()
	}
	if err == nil && sp.gen == gen {
		return sp, nil
	}
	s.discardSpare(sp)
	if err != nil {
		return nil, err
	}
	if sp, err = s.prepareSpare(trap); err != nil {
		return nil, err
	}
	if err := sp.pc.launch(cmd); err != nil {
		s.discardSpare(sp)
		return nil, err
	}
	return sp, nil
}

// await reaps a call's init, or a handed spare's, once it has exited (the
// daemon heard the call's end from its report, or dropped the spare), then
// releases the call's bound.
func (s *cellServer) await(sp *spareCall) {
	defer s.calls.Done()
	waitInit(sp.pc.pidfd)
	s.live.Delete(sp)
	sl := &s.spare
	sl.mu.Lock()
	if sl.handed[sp.serial] == sp {
		delete(sl.handed, sp.serial) // dropped unused: its go socket is this goroutine's
		sp.pc.discard()
	}
	sl.mu.Unlock()
	unix.Close(sp.pc.pidfd)
	sp.pc.release() // reaped: nothing reads the spec or runs on the stacks any more
	// The next call's init is made between calls (while the model
	// answers), not while this one ran: on a busy machine it would take
	// CPU from the command; nor at once (refillDelay).
	s.refillSoon()
	// The cgroup goes after the answer: the kernel may take milliseconds
	// to release it, which the command's caller need not wait for.
	sp.bound.done()
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// reply sends r with the descriptors of fds that are not -1.
func (s *cellServer) reply(r cellReply, fds ...int) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var send []int
	for _, fd := range fds {
		if fd >= 0 {
			send = append(send, fd)
		}
	}
	sendCell(cellFD, r, send...)
}

// currentRulesetLocked is the Landlock ruleset for the next call, and its
// generation: the one built before unless a directory the rules list entry
// by entry (an ancestor of a denied directory) or a granted directory has
// changed since. rmu is held.
func (s *cellServer) currentRulesetLocked() (int, uint32, uint64, error) {
	if s.stamp != "" && s.rulesStamp(s.split) == s.stamp {
		return s.ruleset, s.flags, s.gen, nil
	}
	// The split directories are found again only here: a change in where
	// a denied directory's path leads (a link made or moved) changes the
	// modification time of the directory holding it, one of them.
	s.split = splitDirs(s.policy.deny)
	stamp := s.rulesStamp(s.split)
	fd, flags, err := landlockConfig(s.policy.noNet).NewRulesetFD(sandboxRules(s.policy, s.abi)...)
	if err != nil {
		return -1, 0, 0, err
	}
	if s.ruleset >= 0 {
		unix.Close(s.ruleset)
	}
	s.gen++
	s.ruleset, s.flags, s.stamp = fd, flags, stamp
	return fd, flags, s.gen, nil
}

// rulesStamp names the state the rules depend on (rulesStampOf), as this
// server sees it. It is taken before every call.
func (s *cellServer) rulesStamp(split []string) string {
	return rulesStampOf(split, s.policy.write, unix.Stat)
}

// rulesStampOf names the state a cell's rules depend on: the modification
// times of the split directories (whose entries get rules one by one) and
// whether each granted directory exists, each looked up with stat. The
// daemon takes it too, through the cell's root (cellView.stat), to check a
// handed spare's rules itself.
func rulesStampOf(split, write []string, stat func(string, *unix.Stat_t) error) string {
	var b []byte
	var st unix.Stat_t
	for _, d := range split {
		if stat(d, &st) == nil {
			b = strconv.AppendInt(b, st.Mtim.Nano(), 36)
		}
		b = append(b, ',')
	}
	for _, w := range write {
		if stat(w, &st) == nil {
			b = append(b, '+')
		}
		b = append(b, ',')
	}
	return string(b)
}

// splitDirs are the ancestors of the denied directories: sandboxRules
// grants their entries one by one.
func splitDirs(deny []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range deny {
		for _, c := range []string{canonical(d), d} {
			for a := filepath.Dir(c); ; a = filepath.Dir(a) {
				if !seen[a] {
					seen[a] = true
					out = append(out, a)
				}
				if a == "/" || a == "." {
					break
				}
			}
		}
	}
	return out
}

// cellSockets keeps a cell's commands away from unix sockets bound after
// it started: the host's table, re-read before each call, and the rows
// already looked at.
type cellSockets struct {
	mu     sync.Mutex // held while the table is read and what is new in it covered
	table  hostTable
	seen   map[string]string // path → socket inode, as the table gives them
	exempt func(string) bool // callMounts.exempt
	// last is the table as it read when every row in it had been looked
	// at: the same bytes hold nothing new.
	last []byte
}

// refreshSockets covers, with /dev/null, every socket bound on the host
// since the last look that the cell's namespace shows at its path (not in
// a private area, a directory commands write, or allowed): a tmux or an
// nvim server started while the cell runs, or a covered socket the host
// removed and bound again. A socket it cannot cover fails the call.
func (s *cellServer) refreshSockets() error {
	c := &s.sockets
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]string{}
	}
	table, err := c.table.read()
	if err != nil {
		return fmt.Errorf("read the machine's unix sockets: %w", err)
	}
	if bytes.Equal(table, c.last) {
		return nil
	}
	socks, err := readHostSockets(bytes.NewReader(table), c.seen)
	if err != nil {
		return err
	}
	for _, h := range socks {
		if c.exempt(h.path) {
			continue
		}
		if err := unix.Mount("/dev/null", h.path, "", unix.MS_BIND, ""); err != nil {
			delete(c.seen, h.path) // look again next time
			return fmt.Errorf("hide the socket %s bound since the sandbox started: %w", h.path, err)
		}
	}
	c.last = append(c.last[:0], table...)
	return nil
}
