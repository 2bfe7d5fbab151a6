package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// sandboxSupported: the helper exists on Linux.
const sandboxSupported = true

// landlockConfig is what the helper asks of Landlock: every filesystem right
// up to ABI 8 (ABI 9's "resolve unix", which would close connect(2) to
// hearth's socket, is left for a kernel to test it on), signals and abstract
// unix sockets scoped (ABI 6+: a command cannot signal the daemon, the
// editor or anything else outside its sandbox, nor connect to an abstract
// socket made outside it — a session bus, an X server, a terminal
// multiplexer that could run a command for it unconfined) and, when noNet
// is set, TCP bind and connect handled with no port
// allowed: every TCP connect(2) and bind(2) is refused (ABI 4+). ABI 10's
// UDP rights are left out, as ABI 9's: for a kernel to test them on.
// BestEffort applies what the running kernel knows; NetworkEnforced and
// NetworkStatus say when that leaves the network open.
func landlockConfig(noNet bool) landlock.Config {
	cfg := landlock.V8
	cfg.HandledAccessNet = 0
	if noNet {
		cfg.HandledAccessNet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	}
	cfg.Scoped = landlock.ScopedSet(ll.ScopeSignal | ll.ScopeAbstractUnixSocket)
	return cfg.BestEffort()
}

// landlockNetABI is the first Landlock ABI with network rules (TCP).
const landlockNetABI = 4

// networkUnsupported is unused here: Linux has the helper.
const networkUnsupported = ""

// kernelNetwork reports whether helper can turn a command's network off
// here: an empty network namespace, or Landlock's TCP rules, or both.
func kernelNetwork(helper []string) (bool, string) {
	abi, why := landlockABI()
	return netStatus(abi, why, helperNetnsErr(helper))
}

// netStatus is kernelNetwork for a given Landlock ABI (0: none, and why)
// and the error of creating an empty network namespace (nil: it works).
func netStatus(abi int, why string, nsErr error) (bool, string) {
	switch {
	case nsErr == nil:
		return true, ""
	case abi == 0:
		return false, why + ", and no network namespace (" + nsErr.Error() + ")"
	case abi < landlockNetABI:
		return false, fmt.Sprintf("Landlock ABI %d has no network rules (ABI %d, Linux 6.7, has them), and no network namespace (%v)", abi, landlockNetABI, nsErr)
	}
	return true, ""
}

// NetworkStatus says whether the shell tool can turn the network off for
// the commands of a session, what that covers and what it does not, or
// "cannot restrict the network: " and why. For `hearth doctor`.
func NetworkStatus() string {
	abi, why := landlockABI()
	return networkStatus(abi, why, netnsErr())
}

func networkStatus(abi int, why string, nsErr error) string {
	if ok, why := netStatus(abi, why, nsErr); !ok {
		return "cannot restrict the network: " + why + "; commands have the network in every mode"
	}
	const unix = "unix sockets with a path (such as docker's; hearth's own is refused by the daemon), and sockets a command did not open itself"
	if nsErr == nil {
		s := "where the network is off, commands run in an empty network namespace, hearth's socket hidden: no address is reachable, localhost included (TCP, UDP and DNS, Multipath TCP)"
		if abi >= landlockNetABI {
			s += fmt.Sprintf(", and Landlock ABI %d refuses TCP connect and bind too", abi)
		}
		return s + "; not covered: the unix sockets HEARTH_SANDBOX_SOCKETS allows (every other one with a path is hidden, network on or off), and sockets a command did not open itself"
	}
	return fmt.Sprintf("Landlock ABI %d: where the network is off, commands' TCP connect and bind are refused (localhost included); not covered, with no network namespace here (%v): UDP (DNS included), Multipath TCP, %s", abi, nsErr, unix)
}

// landlockWorks reports whether the kernel has Landlock: the helper
// confines what commands write.
func landlockWorks() bool {
	abi, _ := landlockABI()
	return abi > 0
}

// landlockABI is the kernel's Landlock ABI version, or 0 and why not.
// The kernel's answer cannot change: it is asked once (at every command
// otherwise).
var landlockABI = sync.OnceValues(func() (int, string) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS):
		return 0, "this kernel has no Landlock (Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK)"
	case errors.Is(err, unix.EOPNOTSUPP):
		return 0, "Landlock is not enabled at boot (add landlock to the lsm= kernel parameter)"
	case err != nil:
		return 0, fmt.Sprintf("cannot query Landlock: %v", err)
	case v < 1:
		return 0, fmt.Sprintf("Landlock ABI %d", v)
	}
	return v, ""
})

// Status says how `hearth serve` confines the commands the shell
// tool runs on this machine: the Landlock ABI that applies and what it
// enforces, or "not sandboxed: " and why. For `hearth doctor`.
func Status() string {
	abi, why := landlockABI()
	if abi == 0 {
		return "not sandboxed: " + why + "; commands run with your full file access"
	}
	s := fmt.Sprintf("Landlock ABI %d: commands write only in the workspace, the temp dir (the workspace's own /tmp where they get a mount namespace, .git's config and hooks read-only there) and your caches, read everything but hearth's data, config and socket directories, and are killed with everything they started when the call ends", abi)
	var gaps []string
	if abi < 2 {
		gaps = append(gaps, "renaming across directories is refused (ABI 2 allows it)")
	}
	if abi < 3 {
		gaps = append(gaps, "truncate(2) is not restricted (ABI 3)")
	}
	if abi < 6 {
		gaps = append(gaps, "signals to processes outside the sandbox are not blocked (ABI 6)")
	}
	if len(gaps) > 0 {
		s += "; on this kernel " + strings.Join(gaps, ", ")
	}
	return s
}

// SocketStatus says which unix sockets with a path the shell tool's
// commands can reach here, allowed being those the user lets them
// (HEARTH_SANDBOX_SOCKETS): those of allowed that exist, where commands
// run in mount namespaces of their own; else "every unix socket ..." and
// why. For `hearth doctor`.
func SocketStatus(allowed []string) string {
	return socketStatus(allowed, mountnsErr())
}

func socketStatus(allowed []string, nsErr error) string {
	if nsErr != nil && len(allowed) > 0 {
		return fmt.Sprintf("every unix socket with a path is reachable from commands (tmux, screen, the session bus, ssh-agent, X11, docker; hearth's own is refused by the daemon): no user and mount namespace here to hide them one by one (%v), and HEARTH_SANDBOX_SOCKETS lets commands open unix sockets", nsErr)
	}
	if nsErr != nil {
		return fmt.Sprintf("commands may open no unix socket (socketpair aside): no user and mount namespace here to hide the machine's one by one (%v)", nsErr)
	}
	var there, missing []string
	for _, a := range allowed {
		if fi, err := os.Stat(a); err == nil && fi.Mode().Type() == os.ModeSocket {
			there = append(there, a)
		} else {
			missing = append(missing, a)
		}
	}
	s := "commands reach no unix socket with a path outside the workspace and their own /tmp"
	if len(there) > 0 {
		s += " but " + strings.Join(there, ", ") + " (HEARTH_SANDBOX_SOCKETS)"
	}
	if len(missing) > 0 {
		s += "; not sockets now, from HEARTH_SANDBOX_SOCKETS: " + strings.Join(missing, ", ")
	}
	return s
}

// helperPolicy is what Exec was asked for.
type helperPolicy struct {
	write, deny []string
	noNet       bool     // --no-network: an empty network namespace, and Landlock refuses TCP
	readOnly    bool     // --read-only: no write grant at all (write still names what the mounts keep)
	writeAll    bool     // --write-anywhere: a write grant on / too
	socket      string   // --hide-socket: hidden in the command's own mount namespace
	tmp         string   // --tmp: bound over /tmp there
	runtimeDir  string   // --runtime-dir: covered there
	allow       []string // --allow-socket: left reachable there
	gitDirs     []string // --git: protected there
	pids        int      // --pids: at most this many processes a call
	pidsCgroup  string   // --pids-cgroup: the call's pids cgroup (the helper's second stage)
	unixTable   string   // --unix-table: the host's socket table (a cell's)
	command     string
}

// mounts is what the command's mount namespace hides and protects, the
// network namespace's socket table read from the first stage (the parent),
// which is in the host's.
func (p helperPolicy) mounts() callMounts {
	if p.unixTable == "" {
		p.unixTable = fmt.Sprintf("/proc/%d/net/unix", os.Getppid()) // the first stage's, in the host's network namespace
	}
	return callMounts{
		keep:       p.write,
		tmp:        p.tmp,
		tmpdir:     os.Getenv("TMPDIR"),
		runtimeDir: p.runtimeDir,
		socket:     p.socket,
		allow:      p.allow,
		gitDirs:    p.gitDirs,
		unixTable:  p.unixTable,
	}
}

func parseHelperArgs(args []string) (helperPolicy, error) {
	var p helperPolicy
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case pidsFlag:
			if i+1 >= len(args) {
				return p, fmt.Errorf("%s needs a number", a)
			}
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil {
				return p, fmt.Errorf("%s: %w", a, err)
			}
			p.pids = n
		case "--write", "--deny", hideSocketFlag, tmpFlag, runtimeDirFlag, allowSocketFlag, gitFlag, unixTableFlag, pidsCgroupFlag:
			if i+1 >= len(args) {
				return p, fmt.Errorf("%s needs a path", a)
			}
			i++
			switch a {
			case "--write":
				p.write = append(p.write, args[i])
			case "--deny":
				p.deny = append(p.deny, args[i])
			case tmpFlag:
				p.tmp = args[i]
			case runtimeDirFlag:
				p.runtimeDir = args[i]
			case allowSocketFlag:
				p.allow = append(p.allow, args[i])
			case gitFlag:
				p.gitDirs = append(p.gitDirs, args[i])
			case unixTableFlag:
				p.unixTable = args[i]
			case pidsCgroupFlag:
				p.pidsCgroup = args[i]
			default:
				p.socket = args[i]
			}
		case noNetworkFlag:
			p.noNet = true
		case readOnlyFlag:
			p.readOnly = true
		case writeAnywhereFlag:
			p.writeAll = true
		case "--":
			if i+2 != len(args) {
				return p, errors.New("-- must be followed by exactly one command line")
			}
			p.command = args[i+1]
			return p, nil
		default:
			return p, fmt.Errorf("unknown argument %q", a)
		}
	}
	return p, errors.New("no command (-- COMMAND)")
}

// sandboxRules turns a policy into Landlock rules: listing every
// directory, reading and executing everything but the denied directories, read-write on the write
// directories minus the denied ones, and read-write on the few device files
// every shell writes to. refer (renames across directories) is asked for
// only where the kernel knows it: on ABI 1 best effort would otherwise
// drop the whole ruleset.
func sandboxRules(p helperPolicy, abi int) []landlock.Rule {
	var deny []string
	for _, d := range p.deny {
		// The real location and the given one: rules follow symlinks.
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		for _, c := range []string{canonical(d), abs} {
			if !slices.Contains(deny, c) {
				deny = append(deny, c)
			}
		}
	}
	var rules []landlock.Rule
	var roDirs, roFiles, rwDirs, rwFiles []string
	for _, g := range expandGrant("/", deny, nil) {
		if g.dir {
			roDirs = append(roDirs, g.path)
		} else {
			roFiles = append(roFiles, g.path)
		}
	}
	for _, w := range p.writeGrants() {
		for _, g := range expandGrant(canonical(w), deny, nil) {
			if g.dir {
				rwDirs = append(rwDirs, g.path)
			} else {
				rwFiles = append(rwFiles, g.path)
			}
		}
	}
	if len(roDirs) > 0 {
		rules = append(rules, landlock.RODirs(roDirs...).IgnoreIfMissing())
	}
	if len(roFiles) > 0 {
		rules = append(rules, landlock.ROFiles(roFiles...).IgnoreIfMissing())
	}
	if len(rwDirs) > 0 {
		rw := landlock.RWDirs(rwDirs...).IgnoreIfMissing()
		if abi >= 2 {
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	if len(rwFiles) > 0 {
		rules = append(rules, landlock.RWFiles(rwFiles...).IgnoreIfMissing())
	}
	// Listing directories is allowed everywhere, hearth's included (names,
	// not contents), so splitting / and ~ does not make them unlistable.
	rules = append(rules, landlock.PathAccess(ll.AccessFSReadDir, "/"))
	rules = append(rules, landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").IgnoreIfMissing())
	return rules
}

// writeGrants are the directories the policy's rules let commands write:
// none when read-only, / too (split around the denied ones) when escalated.
func (p helperPolicy) writeGrants() []string {
	switch {
	case p.readOnly:
		return nil
	case p.writeAll:
		return append([]string{"/"}, p.write...)
	}
	return p.write
}

// confineFlag, first among the helper's arguments, selects its second
// stage: confine this process and exec the shell.
const confineFlag = "--confine"

// Exec is the helper of one shell command (`hearth __sandbox-exec
// --write DIR... --deny DIR... [--no-network] -- COMMAND`), started by the shell tool as
// the leader of the call's process group, its working directory the
// workspace root and its environment the tool environment. It returns the
// exit code for os.Exit, or, when the shell was killed by a signal, dies of
// that signal itself so the daemon sees how the command ended.
//
//  1. It makes itself the child subreaper: every process of the call whose
//     parent exits is reparented to it, setsid or double fork or not.
//  2. It starts itself again with --confine first (the second stage), in
//     its process group; that process confines itself with Landlock (see
//     sandboxRules and landlockConfig) and execs /bin/sh -c COMMAND, so the
//     shell and everything it starts share one Landlock domain. The first
//     stage stays unconfined: on kernels before Landlock ABI 8 each thread
//     of a Go process gets a domain of its own, and a scoped domain may not
//     signal a sibling one, so the process that kills the call must be
//     outside. A ruleset that cannot be built fails the command (exit 126,
//     nothing runs); a kernel without Landlock runs it unconfined, as
//     Status reports. The second stage starts in a user and mount
//     namespace of its own when user namespaces allow it (ownNamespaces),
//     where it hides the machine's unix sockets, makes /tmp the
//     workspace's own and protects .git (setupCallMounts) before Landlock;
//     a cover that fails fails the command (exit 126). With --no-network
//     that namespace holds an empty network namespace too (emptyNetwork),
//     and its Landlock domain refuses TCP connect and bind (ABI 4+).
//  3. When the shell exits, or the helper gets SIGTERM, SIGINT or SIGHUP
//     (the daemon's timeout or cancel, or the daemon's death through
//     PR_SET_PDEATHSIG), every descendant gets SIGTERM, then, after
//     KillGrace, SIGKILL until none is left. Descendants are found by
//     walking /proc for the processes whose parent chain leads here, and
//     signalled through a pidfd checked to still be a descendant, so a
//     recycled pid is never hit; the helper reaps them all before it exits.
func Exec(args []string) int {
	if len(args) > 0 && args[0] == confineFlag {
		return confineAndExec(args[1:])
	}
	if len(args) > 0 && args[0] == serveFlag {
		return serveCell(args[1:])
	}
	if len(args) == 1 && args[0] == checkNetworkFlag {
		if err := tryEmptyNetwork(); err != nil {
			fmt.Println(err)
			return 1
		}
		return 0
	}
	p, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearth sandbox:", err)
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "hearth sandbox: cannot become the call's subreaper:", err)
		return 126
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	// The same subcommand again, with --confine first (and --own-mounts
	// when it starts in a mount namespace of its own).
	sub := os.Args[1 : len(os.Args)-len(args)]
	cgroup := helperCgroup(p.pids)                // helper_bound_linux.go
	defer func() { removeHelperCgroup(cgroup) }() // when the shell never started
	if cgroup != "" {
		args = append([]string{pidsCgroupFlag, cgroup}, args...)
	}
	start := func(attr *syscall.SysProcAttr, flags ...string) (*exec.Cmd, error) {
		sh := exec.Command("/proc/self/exe", slices.Concat(sub, flags, args)...)
		sh.Stdin, sh.Stdout, sh.Stderr = os.Stdin, os.Stdout, os.Stderr
		sh.SysProcAttr = attr
		return sh, sh.Start()
	}
	// In a user and mount namespace of its own (setupCallMounts), and a
	// network namespace of its own when the network is off.
	sh, err := start(ownNamespaces(p.noNet), confineFlag, mountsFlag)
	if p.noNet && err != nil {
		// In an empty network namespace when user namespaces allow it;
		// else Landlock alone refuses TCP (NetworkStatus says which holds).
		sh, err = start(emptyNetwork(false), confineFlag)
	}
	if err != nil {
		sh, err = start(nil, confineFlag)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearth sandbox:", err)
		return 126
	}
	c := &callReaper{shell: sh.Process.Pid}
	for !c.shellDone {
		if s := <-sigs; s != syscall.SIGCHLD {
			break
		}
		c.reapAll(false)
	}
	c.killAll(sigs)
	signal.Stop(sigs)
	removeHelperCgroup(cgroup) // before the exit the daemon waits for
	cgroup = ""
	return c.exit()
}

// mountsFlag, after confineFlag, tells the second stage it runs in a mount
// namespace of its own (ownNamespaces), where its mounts stay.
const mountsFlag = "--own-mounts"

// confineAndExec is the second stage: in a mount namespace of its own,
// the host's unix sockets hidden, /tmp private, .git protected
// (setupCallMounts); then Landlock, then /bin/sh -c COMMAND in place of
// this process.
func confineAndExec(args []string) int {
	ownMounts := len(args) > 0 && args[0] == mountsFlag
	if ownMounts {
		args = args[1:]
	}
	p, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearth sandbox:", err)
		return 2
	}
	if ownMounts {
		if err := setupCallMounts(p.mounts()); err != nil {
			fmt.Fprintln(os.Stderr, "hearth sandbox: cannot set up the command's mount namespace (it hides the machine's unix sockets), so it does not run:", err)
			return 126
		}
		// The working directory again, through the mounts: the one
		// inherited may lie under the old /tmp.
		if wd, err := os.Getwd(); err == nil {
			os.Chdir(wd)
		}
		// /tmp is the workspace's own now: commands write there.
		p.write = append(p.write, "/tmp")
		// The capability the mounts needed (ownNamespaces) is not the shell's.
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "hearth sandbox: cannot drop the mount capability:", err)
			return 126
		}
	}
	if err := boundCall(p.pidsCgroup, p.pids, ownMounts); err != nil { // helper_bound_linux.go
		fmt.Fprintln(os.Stderr, "hearth sandbox:", err)
		return 126
	}
	abi, _ := landlockABI()
	if err := landlockConfig(p.noNet).Restrict(sandboxRules(p, abi)...); err != nil {
		fmt.Fprintln(os.Stderr, "hearth sandbox: cannot confine the command:", err)
		return 126
	}
	if !ownMounts && len(p.allow) == 0 && abi > 0 {
		// No namespace to cover the machine's sockets in: none at all
		// (unix_refuse_linux.go).
		if err := refuseUnixSockets(); err != nil {
			fmt.Fprintln(os.Stderr, "hearth sandbox: cannot refuse the command unix sockets, which no mount namespace hides here, so it does not run:", err)
			return 126
		}
	}
	err = syscall.Exec("/bin/sh", []string{"/bin/sh", "-c", p.command}, os.Environ())
	fmt.Fprintln(os.Stderr, "hearth sandbox: cannot run /bin/sh:", err)
	return 126
}

// callReaper collects the helper's children: the shell and everything
// reparented to it.
type callReaper struct {
	shell     int
	shellDone bool
	status    unix.WaitStatus
}

// reapAll collects every child that has ended, blocking for one when block
// is set and there is any child.
func (c *callReaper) reapAll(block bool) {
	for {
		var ws unix.WaitStatus
		opts := unix.WNOHANG
		if block {
			opts = 0
		}
		pid, err := unix.Wait4(-1, &ws, opts, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		if pid == c.shell {
			c.shellDone, c.status = true, ws
		}
		if block {
			return
		}
	}
}

// killAll ends every descendant: SIGTERM, up to KillGrace for them to
// go (woken by SIGCHLD), then SIGKILL rounds until none is left.
func (c *callReaper) killAll(sigs <-chan os.Signal) {
	c.reapAll(false)
	signalDescendants(syscall.SIGTERM)
	grace := time.NewTimer(KillGrace)
	defer grace.Stop()
	for len(descendants()) > 0 {
		select {
		case <-sigs:
		case <-grace.C:
			for len(descendants()) > 0 {
				signalDescendants(syscall.SIGKILL)
				c.reapAll(true)
				c.reapAll(false) // every child that has ended, not one per walk of /proc
			}
		}
		c.reapAll(false)
	}
	c.reapAll(false)
}

// reraised are the signals the helper can die of itself, after
// signal.Reset, so the daemon sees the shell's death as it was.
var reraised = []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGPROF}

// exit turns the shell's status into the helper's.
func (c *callReaper) exit() int {
	switch {
	case !c.shellDone:
		return 126
	case c.status.Signaled():
		sig := c.status.Signal()
		if slices.Contains(reraised, sig) {
			// A signal to this thread is handled before tgkill returns:
			// the runtime's handler, with the signal reset, kills the process.
			signal.Reset(sig)
			runtime.LockOSThread()
			unix.Tgkill(os.Getpid(), unix.Gettid(), sig)
		}
		// The Go runtime handles the others itself (a goroutine dump for
		// SIGQUIT, a crash report for SIGSEGV): report them as a shell
		// would, 128 + the signal's number.
		return 128 + int(sig)
	default:
		return c.status.ExitStatus()
	}
}

// descendants lists the processes whose parent chain leads to this one,
// from /proc.
func descendants() []int {
	children := map[int][]int{}
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads pid's parent from /proc/pid/stat.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// signalDescendants sends sig to every descendant through a pidfd, after
// checking, with the pidfd open, that the pid still names a descendant.
func signalDescendants(sig syscall.Signal) {
	ds := descendants()
	mine := map[int]bool{os.Getpid(): true}
	for _, d := range ds {
		mine[d] = true
	}
	for _, pid := range ds {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone already
		}
		if ppid, ok := parentOf(pid); ok && mine[ppid] {
			unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		unix.Close(fd)
	}
}
