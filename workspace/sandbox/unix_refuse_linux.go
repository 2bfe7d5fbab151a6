package sandbox

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Where user namespaces are refused (a sysctl, AppArmor's restriction on
// Ubuntu, a container) a command gets no mount namespace in which the
// machine's unix sockets could be covered, and Landlock cannot refuse a
// connection to a socket with a path. So there the command's second stage
// refuses it unix sockets altogether: a seccomp filter under which
// socket(AF_UNIX, …) fails with EACCES — tmux, an nvim server, the
// session bus, ssh-agent and docker are then as far out of reach as
// behind the mounts. socketpair(2) stays allowed: a pair connects to
// nothing outside. What the filter cannot tell apart it refuses: a
// syscall of another ABI (x32, i386) fails with ENOSYS.

// refuseUnixSockets installs the filter on every thread of this process;
// what it execs keeps it. It needs no_new_privs (Landlock has set it).
func refuseUnixSockets() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return errors.New("no seccomp filter for " + runtime.GOARCH)
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		x32  = 0x40000000 // __X32_SYSCALL_BIT
		errn = unix.SECCOMP_RET_ERRNO
	)
	// struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low
	// half first: both arches are little-endian).
	filter := []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: errn | uint32(unix.ENOSYS)},
		{Code: ld, K: 0},
		{Code: jge, Jt: 0, Jf: 1, K: x32},
		{Code: ret, K: errn | uint32(unix.ENOSYS)},
		{Code: jeq, Jt: 1, K: uint32(unix.SYS_SOCKET)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ld, K: 16},
		{Code: jeq, Jt: 0, Jf: 1, K: unix.AF_UNIX},
		{Code: ret, K: errn | uint32(unix.EACCES)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if e != 0 {
		return e
	}
	return nil
}
