//go:build linux

package sandbox

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A command's file changes are trapped where the cell runs it: its init
// installs a seccomp filter (trapFilter) that sends the syscalls able to
// change a file — an open for writing, creating or truncating, truncate,
// unlink, rename, link, symlink, chmod, mknod, mkdir, rmdir — to a listener the daemon
// holds (SECCOMP_RET_USER_NOTIF). The daemon reads the path from the
// process's memory, resolves it against its working directory or
// directory descriptor, tells Command.Changes when it lies in the
// workspace, and only then lets the syscall go on
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE): a checkpoint can keep what the file
// held before anyone sees it change. An open for reading never leaves the
// kernel (the filter tests its flags); openat2's flags lie behind a
// pointer, so it is trapped and its flags read here. io_uring_setup fails
// with ENOSYS, as does a syscall of another ABI (x32, i386): nothing
// changes a file past the trap. The path is read before the syscall runs,
// so a process that rewrites it in between (another thread) can change
// another file than the one named; the trap is for undoing, not a wall.

// trapReadable reports whether the daemon may read its commands' memory
// (process_vm_readv, as a ptrace attach): not under Yama's ptrace_scope 2
// or 3, where only an administrator may. Without it a trapped path could
// not be read, so commands are not trapped at all (and their changes are
// found the way untrapped ones are).
var trapReadable = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return true // no Yama: the usual ptrace rules, which let the daemon read its descendants
	}
	scope := strings.TrimSpace(string(b))
	return scope == "0" || scope == "1"
})

// trapWriteFlags are the open(2) flags that can change a file.
const trapWriteFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// trapSyscall is one syscall the trap stops: its number, the argument
// holding open flags to test in the filter (-1: always trapped), whether
// they lie in an open_how (openat2), and the paths it changes.
type trapSyscall struct {
	nr       int
	flagsArg int
	openHow  bool
	targets  []trapTarget
}

// trapTarget locates one path a syscall changes: its directory descriptor
// argument (-1: the working directory) and its path argument (-1: the
// descriptor itself is the file).
type trapTarget struct{ dirArg, pathArg int }

// trapFilter is the seccomp program of the trap, or nil where the
// architecture has no table.
func trapFilter() []unix.SockFilter {
	if trapArch == 0 {
		return nil
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		x32   = 0x40000000
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		notif = unix.SECCOMP_RET_USER_NOTIF
		allow = unix.SECCOMP_RET_ALLOW
	)
	// struct seccomp_data: nr at 0, arch at 4, args[i] at 16+8i (the low
	// half first: both arches are little-endian).
	f := []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, Jt: 1, K: uint32(trapArch)},
		{Code: ret, K: nosys},
		{Code: ld, K: 0},
		{Code: jge, Jt: 0, Jf: 1, K: x32},
		{Code: ret, K: nosys},
		{Code: jeq, Jt: 0, Jf: 1, K: unix.SYS_IO_URING_SETUP},
		{Code: ret, K: nosys},
	}
	for _, s := range trapSyscalls {
		if s.flagsArg < 0 {
			f = append(f, unix.SockFilter{Code: jeq, Jt: 0, Jf: 1, K: uint32(s.nr)}, unix.SockFilter{Code: ret, K: notif})
			continue
		}
		f = append(f,
			unix.SockFilter{Code: jeq, Jt: 0, Jf: 4, K: uint32(s.nr)},
			unix.SockFilter{Code: ld, K: uint32(16 + 8*s.flagsArg)},
			unix.SockFilter{Code: jset, Jt: 0, Jf: 1, K: trapWriteFlags},
			unix.SockFilter{Code: ret, K: notif},
			unix.SockFilter{Code: ret, K: allow})
	}
	return append(f, unix.SockFilter{Code: ret, K: allow})
}

// seccompNotif and seccompNotifResp are the kernel's struct seccomp_notif
// and struct seccomp_notif_resp.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// trapWatch answers the trapped syscalls of one call. Started by
// watchTrap when the call's listener arrives, its goroutine ends when
// every process of the call is gone (the listener hangs up) or end asks
// it to, closing the listener; the owner given to watchTrap awaits it.
type trapWatch struct {
	fd      int
	root    string
	changes func(path string)
	stop    [2]int       // a pipe: the write end's close stops the goroutine
	trapped atomic.Int64 // syscalls answered
	byNr    map[int32]trapSyscall

	mu    sync.Mutex // held while changes is told; guards ended
	ended bool       // end was called: changes is told nothing more
}

// watchTrap starts answering listener's notifications, telling changes
// of each path inside root about to change. It owns listener; owner
// counts its goroutine.
func watchTrap(listener int, root string, changes func(string), owner *sync.WaitGroup) (*trapWatch, error) {
	w := &trapWatch{fd: listener, root: root, changes: changes, byNr: map[int32]trapSyscall{}}
	if err := unix.Pipe2(w.stop[:], unix.O_CLOEXEC); err != nil {
		unix.Close(listener)
		return nil, err
	}
	for _, s := range trapSyscalls {
		w.byNr[int32(s.nr)] = s
	}
	// The trapped process and this goroutine hand the CPU to each other
	// (Linux 6.6+; older kernels refuse it and wake them the usual way).
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	owner.Add(1)
	go func() {
		defer owner.Done()
		w.serve()
	}()
	return w, nil
}

// end is called once every process of the call is gone: it returns once
// changes is told nothing more (waiting for what it is being told), and
// stops the goroutine without waiting for it. Its caller is spared a
// wake-up of the goroutine's thread; nothing can be trapped any more.
func (w *trapWatch) end() {
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
	unix.Close(w.stop[1])
}

func (w *trapWatch) serve() {
	defer unix.Close(w.fd)
	defer unix.Close(w.stop[0])
	stopping := false
	for {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(w.stop[0]), Events: unix.POLLIN}}
		timeout := -1
		if stopping {
			fds, timeout = fds[:1], 0
		}
		n, err := unix.Poll(fds, timeout)
		if err == unix.EINTR {
			continue
		}
		switch {
		case err != nil:
			return
		case fds[0].Revents&unix.POLLIN != 0:
			w.answer()
		case fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0, stopping && n == 0:
			return
		default:
			stopping = true
		}
	}
}

// answer receives one notification, tells changes of the paths it is
// about to change, and lets it go on.
func (w *trapWatch) answer() {
	var n seccompNotif
	if err := ioctlPtr(w.fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
		return // the process died meanwhile (ENOENT), or a signal interrupted it
	}
	w.trapped.Add(1)
	paths := w.paths(&n)
	// The pid still names the process that made the call: what was read
	// from its memory and /proc is that process's.
	id := n.id
	w.mu.Lock()
	if !w.ended && ioctlPtr(w.fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil {
		for _, p := range paths {
			if insideAny(p, []string{w.root}) {
				w.changes(p)
			}
		}
	}
	w.mu.Unlock()
	resp := seccompNotifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	ioctlPtr(w.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// paths are the absolute paths n's syscall is about to change, as its
// process names them; none for an open that only reads (openat2).
func (w *trapWatch) paths(n *seccompNotif) []string {
	s, ok := w.byNr[n.nr]
	if !ok {
		return nil
	}
	pid := int(n.pid)
	if s.openHow {
		var how [8]byte
		if readMem(pid, n.args[2], how[:]) != nil || binary.LittleEndian.Uint64(how[:])&trapWriteFlags == 0 {
			return nil
		}
	}
	var out []string
	for _, t := range s.targets {
		if p, ok := trapPath(pid, n.args, t); ok {
			out = append(out, p)
		}
	}
	return out
}

// trapPath resolves one target of a trapped syscall of process pid.
func trapPath(pid int, args [6]uint64, t trapTarget) (string, bool) {
	proc := "/proc/" + strconv.Itoa(pid)
	var rel string
	if t.pathArg >= 0 {
		var err error
		if rel, err = readPath(pid, args[t.pathArg]); err != nil {
			return "", false
		}
		if filepath.IsAbs(rel) {
			return filepath.Clean(rel), true
		}
	}
	dir := proc + "/cwd"
	if t.dirArg >= 0 && int32(args[t.dirArg]) != unix.AT_FDCWD {
		dir = proc + "/fd/" + strconv.Itoa(int(int32(args[t.dirArg])))
	}
	base, err := os.Readlink(dir)
	if err != nil || !filepath.IsAbs(base) {
		return "", false
	}
	return filepath.Join(base, rel), true
}

// readPath reads the NUL-terminated path at addr in process pid's memory.
func readPath(pid int, addr uint64) (string, error) {
	var buf [unix.PathMax]byte
	got := 0
	for got < len(buf) {
		// Up to the end of the page: the next may be unmapped.
		chunk := min(len(buf)-got, 4096-int((addr+uint64(got))%4096))
		if err := readMem(pid, addr+uint64(got), buf[got:got+chunk]); err != nil {
			return "", err
		}
		for i := got; i < got+chunk; i++ {
			if buf[i] == 0 {
				return string(buf[:i]), nil
			}
		}
		got += chunk
	}
	return "", unix.ENAMETOOLONG
}

// readMem fills b from process pid's memory at addr.
func readMem(pid int, addr uint64, b []byte) error {
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(len(b))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return err
	}
	if n != len(b) {
		return unix.EFAULT
	}
	return nil
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
