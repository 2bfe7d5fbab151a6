//go:build linux && cgo

package sandbox

/*
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

// The init and the shell's starter (below) run on the thread-local
// storage of the server's thread that made the init — clone(2) with
// CLONE_VM but not CLONE_SETTLS — and that thread goes on running: libc's
// errno would be one variable for both, each reading what the other
// wrote. So they make their system calls through sys, which returns
// -errno and touches no thread-local storage. (libc's clone, which starts
// its child on a stack of its own, is the one call left: its errno is
// read at once, and only for a failure's report.)
#if defined(__x86_64__)
static long sys(long n, long a, long b, long c, long d, long e, long f) {
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile ("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
static long sys(long n, long a, long b, long c, long d, long e, long f) {
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d, x4 __asm__("x4") = e, x5 __asm__("x5") = f;
	__asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory", "cc");
	return x0;
}
#else
// Elsewhere through libc, errno shared as above: a rare wrong error code.
static long sys(long n, long a, long b, long c, long d, long e, long f) {
	long r = syscall(n, a, b, c, d, e, f);
	return r < 0 ? -errno : r;
}
#endif
#define SYS(n, a, b, c, d) sys(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

// hearth_call is one command's spec: its confinement, set up by the cell
// server before the clone (hearth_prepare), and its command, which the init
// reads from its command socket into memory it maps itself (recv_command):
// the init shares the server's memory and must not touch its heap, so it
// only makes system calls.
struct hearth_call {
	int ruleset_fd;            // Landlock ruleset, -1: none
	unsigned int ruleset_flags;
	int own_userns;            // a user namespace of the call's own (its process count)
	char uid_map[32], gid_map[32];
	long nproc;                // RLIMIT_NPROC in it, 0: none
	int cgroup_fd;             // cgroup.procs of the call's pids cgroup, -1: none
	int status_fd;             // the shell's end is reported here
	int grace_ms;              // SIGTERM to SIGKILL
	int spin_us;               // how long the shell's starter waits awake for the go, 0: not at all
	const void *trap_prog;     // struct sock_fprog of the file-change trap, NULL: none
	// Set by the init from its command (recv_command):
	int out_fd, null_fd;       // stdout+stderr, stdin: the init's copies
	int tty;                   // stdin is a terminal: the shell's session's controlling one
	int go_fd;                 // the init's go socket: the starter waits there for the go
	const char *dir;
	const char *path;          // the program
	char *const *argv;
	char *const *envp;
	void *cmd_mem;             // the mapping holding the command, unmapped once the init has exited
	long cmd_len;
};

// A command comes on the init's command socket as a hearth_cmd_head, then
// size bytes: the directory, the program, argc arguments and envc
// variables, each ending in a NUL. The head's first bytes carry the
// output's and stdin's descriptors.
struct hearth_cmd_head { uint32_t size, argc, envc, tty; };

// MAX_COMMAND bounds a command's bytes (maxCommand; ARG_MAX is far below).
#define MAX_COMMAND (16 << 20)

// send_ready tells the server on its go socket that the init waits for
// its command: one byte, carrying the file-change trap's listener when fd
// is not -1.
static void send_ready(int go, int fd) {
	char b = 'r', buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &b, 1 };
	struct msghdr m;
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (fd >= 0) {
		memset(buf, 0, sizeof buf);
		m.msg_control = buf;
		m.msg_controllen = sizeof buf;
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &fd, sizeof(int));
	}
	while (SYS(SYS_sendmsg, go, &m, MSG_NOSIGNAL, 0) == -EINTR) {}
}

// A report on status_fd: what ended the call. kind 0: the shell's wait
// status (or -1: it was still running when the call was ended), every
// other process of the call reaped; kind 2: the same, but some were left
// for the init's exit to kill; kind 1: a set-up step failed (nothing was
// started), value = step << 16 | errno.
struct hearth_report { int32_t kind, value; };

static void report(int fd, int kind, int value) {
	struct hearth_report r = { kind, value };
	while (SYS(SYS_write, fd, &r, sizeof r, 0) == -EINTR) {}
}

// fail reports that step failed with r (-errno) and exits.
static void fail(struct hearth_call *c, int step, long r) {
	report(c->status_fd, 1, step << 16 | (int)(r < 0 ? -r : EIO));
	_exit(127);
}

// write_file writes s into path: 0, or -errno.
static long write_file(const char *path, const char *s) {
	long fd = SYS(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0) return fd;
	long n = SYS(SYS_write, fd, s, strlen(s), 0);
	SYS(SYS_close, fd, 0, 0, 0);
	return n < 0 ? n : n == (long)strlen(s) ? 0 : -EIO;
}

// close_others closes every descriptor but keep (sorted, distinct): the
// init outlives this fork, and the server holds other calls' output pipes.
static void close_others(int *keep, int n) {
	unsigned int from = 0;
	for (int i = 0; i < n; i++) {
		if (keep[i] < 0) continue;
		if ((unsigned int)keep[i] > from) SYS(SYS_close_range, from, keep[i] - 1, 0, 0);
		from = keep[i] + 1;
	}
	SYS(SYS_close_range, from, ~0U, 0, 0);
}

static void sort_fds(int *a, int n) {
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && a[j-1] > a[j]; j--) { int t = a[j]; a[j] = a[j-1]; a[j-1] = t; }
}

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); // the vDSO's: errno untouched
	return ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long now_ms(void) { return now_us() / 1000; }

// The init and the shell's starter are clone(2)d with CLONE_VM: they
// share the server's memory instead of copying its page tables (a fork of
// a Go process, and the copy-on-write faults of the server while a forked
// copy lives, cost milliseconds). Each runs on a stack of its own (callStack)
// and touches nothing of the server's but the call's spec, which the server
// keeps until the init has exited.
#define CALL_STACK (64 * 1024)
#define CMD_ON_STACK (16 * 1024) // of the init's: a command this size or less

struct init_args { struct hearth_call *c; int cmd_fd, go_fd; char *sh_stack; };

// hearth_prepared is one call's spec and its init's arguments, kept by the
// server from hearth_prepare until the init has exited (release).
struct hearth_prepared { struct hearth_call c; struct init_args a; };

static long recv_fds(int fd, void *b, long len, int *fds, int *nfds);
static long recv_command(int fd, struct hearth_call *c, int *fds, int *nfds, long *buf, long buf_len);

static int start_shell(void *arg) {
	struct hearth_call *c = arg;
	unsigned long none = 0; // the kernel's sigset
	SYS(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, sizeof none);
	// null_fd and out_fd are above 2 (call_init): dup3 is dup2 here.
	if (SYS(SYS_dup3, c->null_fd, 0, 0, 0) < 0 || SYS(SYS_dup3, c->out_fd, 1, 0, 0) < 0 || SYS(SYS_dup3, c->out_fd, 2, 0, 0) < 0) _exit(127);
	if (c->tty && (SYS(SYS_setsid, 0, 0, 0, 0) < 0 || SYS(SYS_ioctl, 0, TIOCSCTTY, 0, 0) < 0)) _exit(127);
	// The go: the server checked, while this was set up, that the rules
	// and the hidden sockets still hold (goAhead). Anything else is the
	// server dropping the call: nothing runs.
	// It comes a few hundred microseconds after the command at most (the
	// checks); waiting for it awake spares the command a wake-up, which
	// costs as much on a virtual machine. Past spin_us this sleeps.
	char b = 0;
	long n = -EAGAIN;
	for (long until = now_us() + c->spin_us; c->spin_us > 0 && now_us() < until;) {
		if ((n = sys(SYS_recvfrom, c->go_fd, (long)&b, 1, MSG_DONTWAIT, 0, 0)) != -EAGAIN && n != -EINTR) break;
		SYS(SYS_sched_yield, 0, 0, 0, 0);
	}
	if (n == -EAGAIN || n == -EINTR)
		while ((n = SYS(SYS_read, c->go_fd, &b, 1, 0)) == -EINTR) {}
	if (n != 1 || b != 'x') _exit(127);
	SYS(SYS_execve, c->path, c->argv, c->envp, 0);
	// As the shell would say it: a program started without one has no
	// other voice.
	static const char msg[] = ": cannot run this program\n";
	SYS(SYS_write, 2, c->argv[0], strlen(c->argv[0]), 0);
	SYS(SYS_write, 2, msg, sizeof msg - 1, 0);
	_exit(127);
}

// call_init runs as pid 1 of the call's pid namespace. It confines
// itself (the file-change trap too, when trap_prog), tells the server it is
// ready on go_fd (with the trap's listener) and waits on cmd_fd for its
// command (recv_command), which the server sends or, for a spare it handed
// over, the daemon. It then sets the call up and starts the shell, whose
// starter execs once a byte, the go, comes on go_fd (from the server, once
// it has checked the sockets and the rules), closes both sockets, reaps
// every process of the call as it ends (orphans are reparented here), and
// when the shell exits or SIGTERM/SIGINT/SIGHUP comes, ends everything
// left: SIGTERM, grace_ms, SIGKILL. Its own exit makes the kernel kill
// whatever remains of the namespace. An init whose cmd_fd closes before a
// command comes exits without a report: it was discarded.
static int call_init(void *arg) {
	struct init_args *a = arg;
	struct hearth_call *c = a->c;
	int cmd = a->cmd_fd, go = a->go_fd;
	char *sh_stack = a->sh_stack;
	unsigned long dfl[4] = { 0 }; // the kernel's sigaction: SIG_DFL, no flags, no mask
	for (int s = 1; s < 65; s++) SYS(SYS_rt_sigaction, s, dfl, 0, sizeof dfl[0]); // Go's handlers are not ours
	SYS(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0);
	int keep[5] = { c->ruleset_fd, c->cgroup_fd, c->status_fd, cmd, go };
	sort_fds(keep, 5);
	close_others(keep, 5);
	long r;
	if (c->own_userns) {
		if ((r = write_file("/proc/self/setgroups", "deny")) < 0) fail(c, 1, r);
		if ((r = write_file("/proc/self/uid_map", c->uid_map)) < 0) fail(c, 2, r);
		if ((r = write_file("/proc/self/gid_map", c->gid_map)) < 0) fail(c, 3, r);
	}
	if (c->nproc > 0) {
		struct rlimit rl = { c->nproc, c->nproc };
		if ((r = SYS(SYS_prlimit64, 0, RLIMIT_NPROC, &rl, 0)) < 0) fail(c, 4, r);
	}
	if (c->cgroup_fd >= 0) {
		if ((r = SYS(SYS_write, c->cgroup_fd, "0", 1, 0)) != 1) fail(c, 5, r);
		SYS(SYS_close, c->cgroup_fd, 0, 0, 0);
	}
	SYS(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0);
	for (int cap = 0; cap < 64; cap++) SYS(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0); // EINVAL past the last
	if ((r = SYS(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0)) < 0) fail(c, 7, r);
	if (c->ruleset_fd >= 0) {
		if ((r = SYS(SYS_landlock_restrict_self, c->ruleset_fd, c->ruleset_flags, 0, 0)) < 0) fail(c, 8, r);
		SYS(SYS_close, c->ruleset_fd, 0, 0, 0);
	}
	// No capability left for the init either: the shell, without any,
	// could not even read its parent's /proc files otherwise.
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof data);
	if ((r = SYS(SYS_capset, &hdr, data, 0, 0)) < 0) fail(c, 10, r);

	// The file-change trap (trap_linux.go), made ahead with the rest: the
	// init and everything it starts run under it; its listener goes to
	// the server with the ready byte.
	int listener = -1;
	if (c->trap_prog) {
		listener = SYS(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, c->trap_prog, 0);
		if (listener < 0) fail(c, 11, listener);
	}
	// Ready: wait for the command.
	send_ready(go, listener);
	if (listener >= 0) SYS(SYS_close, listener, 0, 0, 0);
	int fds[3] = { -1, -1, -1 }, nfds = 0;
	long cmd_buf[CMD_ON_STACK / sizeof(long)]; // lives as long as the init: the shell's starter reads it
	if ((r = recv_command(cmd, c, fds, &nfds, cmd_buf, sizeof cmd_buf)) == 0) _exit(0); // discarded
	if (r < 0) fail(c, 13, r);
	// Above stdin, stdout and stderr, which start_shell's dup2s fill.
	for (int i = 0; i < nfds; i++) {
		if (fds[i] > 2) continue;
		long f = SYS(SYS_fcntl, fds[i], F_DUPFD_CLOEXEC, 3, 0);
		if (f < 0) fail(c, 12, f);
		SYS(SYS_close, fds[i], 0, 0, 0);
		fds[i] = f;
	}
	c->out_fd = fds[0];
	c->null_fd = fds[1];
	if ((r = SYS(SYS_chdir, c->dir, 0, 0, 0)) < 0) fail(c, 6, r);
	c->go_fd = go;
	// vfork-like: this init waits until the shell has exec'd (or its
	// starter has exited: no go came).
	pid_t sh = clone(start_shell, sh_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	if (sh < 0) fail(c, 9, -errno);
	int status_fd = c->status_fd, grace_ms = c->grace_ms;
	SYS(SYS_close, fds[0], 0, 0, 0); // the call's processes hold the output now: EOF when they are gone
	SYS(SYS_close, fds[1], 0, 0, 0);
	SYS(SYS_close, cmd, 0, 0, 0);
	SYS(SYS_close, go, 0, 0, 0);

	// The kernel's sigset (blocked since the clone).
	unsigned long set = 1UL << (SIGCHLD - 1) | 1UL << (SIGTERM - 1) | 1UL << (SIGINT - 1) | 1UL << (SIGHUP - 1);
	int done = 0, status = -1;
	for (;;) {
		int ws;
		long p;
		while ((p = SYS(SYS_wait4, -1, &ws, WNOHANG, 0)) > 0)
			if (p == sh) { done = 1; status = ws; }
		if (done) break;
		long sig = SYS(SYS_rt_sigtimedwait, &set, 0, 0, sizeof set);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) break;
	}
	SYS(SYS_kill, -1, SIGTERM, 0, 0); // every other process of the namespace
	long deadline = now_ms() + grace_ms;
	int empty = 0;
	for (;;) {
		int ws;
		long p;
		while ((p = SYS(SYS_wait4, -1, &ws, WNOHANG, 0)) > 0)
			if (p == sh && !done) { done = 1; status = ws; }
		if (p == -ECHILD) { empty = 1; break; } // nothing left
		long left = deadline - now_ms();
		if (left <= 0) break;
		struct timespec ts = { left / 1000, (left % 1000) * 1000000 };
		SYS(SYS_rt_sigtimedwait, &set, 0, &ts, sizeof set);
	}
	report(status_fd, empty ? 0 : 2, status);
	_exit(0); // the kernel kills and reaps what is left of the namespace
}

// recv_fds reads up to len bytes of fd into b with the up to three
// descriptors they carry (close-on-exec: the shell gets its copies by
// dup2). It returns recvmsg's count: 0 when the other end closed first.
static long recv_fds(int fd, void *b, long len, int *fds, int *nfds) {
	struct iovec iov = { b, len };
	union { struct cmsghdr h; char buf[CMSG_SPACE(3 * sizeof(int))]; } u;
	struct msghdr m;
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	long n;
	while ((n = SYS(SYS_recvmsg, fd, &m, MSG_CMSG_CLOEXEC, 0)) == -EINTR) {}
	*nfds = 0;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); n > 0 && h; h = CMSG_NXTHDR(&m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
		int k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (int i = 0; i < k; i++) {
			int f;
			memcpy(&f, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
			if (*nfds < 3) fds[(*nfds)++] = f;
			else SYS(SYS_close, f, 0, 0, 0);
		}
	}
	return n;
}

// read_all reads n bytes of fd into b: 0, or -errno (-EPIPE: the writer
// closed first).
static long read_all(int fd, char *b, long n) {
	while (n > 0) {
		long r = SYS(SYS_read, fd, b, n, 0);
		if (r == -EINTR) continue;
		if (r <= 0) return r < 0 ? r : -EPIPE;
		b += r;
		n -= r;
	}
	return 0;
}

// recv_command reads the call's command from fd (struct hearth_cmd_head)
// into buf (the init's stack), or a mapping of its own when it does not
// fit, and records the strings in c, and the descriptors the head carried
// into fds. It returns 1, 0 when the sender closed fd first (the init was
// discarded), or -errno.
static long recv_command(int fd, struct hearth_call *c, int *fds, int *nfds, long *buf, long buf_len) {
	struct hearth_cmd_head h;
	long n = recv_fds(fd, &h, sizeof h, fds, nfds);
	if (n <= 0) return n;
	if (*nfds < 2) return -EBADF;
	long r = read_all(fd, (char *)&h + n, sizeof h - n);
	if (r < 0) return r;
	if (h.size > MAX_COMMAND) return -E2BIG;
	if (h.argc == 0 || (long)h.argc + h.envc + 2 > h.size) return -EINVAL; // each string takes its NUL at least
	long ptrs = (h.argc + h.envc + 2) * sizeof(char *);
	long len = ptrs + h.size + 1;
	long mem = (long)buf;
	if (len > buf_len) {
		// A command too big for the init's stack (a huge environment):
		// a mapping the server unmaps (hearth_free_command). The usual
		// command takes none, nor the munmap's TLB flush on every CPU
		// the server's memory is live on.
		mem = sys(SYS_mmap, 0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem < 0 && mem > -4096) return mem;
		c->cmd_mem = (void *)mem;
		c->cmd_len = len;
	}
	char **pp = (char **)mem, *p = (char *)mem + ptrs, *end = p + h.size;
	if ((r = read_all(fd, p, h.size)) < 0) return r;
	*end = 0;
	// The directory, the program, the arguments, NULL, the variables, NULL.
	char *strs[2];
	long want = 2 + h.argc + h.envc;
	for (long i = 0; i < want; i++) {
		if (p >= end) return -EINVAL;
		char *q = memchr(p, 0, end - p);
		if (!q) return -EINVAL;
		if (i < 2) strs[i] = p;
		else if (i < 2 + h.argc) pp[i - 2] = p;
		else pp[i - 1] = p;
		p = q + 1;
	}
	if (p != end) return -EINVAL;
	pp[h.argc] = NULL;
	pp[h.argc + 1 + h.envc] = NULL;
	c->dir = strs[0];
	c->path = strs[1][0] ? strs[1] : pp[0];
	c->argv = pp;
	c->envp = pp + h.argc + 1;
	c->tty = h.tty != 0;
	return 1;
}

// hearth_prepare starts a call's init in a new pid namespace (and a user
// namespace when asked) and returns its pid, with a pidfd, the other ends
// of its command and go sockets, the file-change trap's listener (-1: none)
// and the stack to free once it has exited (hearth_free_stack), or -errno.
// It returns once the init is confined and waits for its command, or has
// failed (its report is on status_fd). Signals stay blocked across the
// clone so none reaches Go's handlers in the child. c's confinement fields
// are read before it returns; the command's are the init's to fill.
static int hearth_prepare(struct hearth_prepared *p, int *pidfd, int *cmd, int *go, int *trap, void **stack) {
	struct hearth_call *c = &p->c;
	char *mem = mmap(NULL, 2 * CALL_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (mem == MAP_FAILED) return -errno;
	int cv[2], gv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cv) < 0) { int e = errno; munmap(mem, 2 * CALL_STACK); return -e; }
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gv) < 0) {
		int e = errno;
		close(cv[0]);
		close(cv[1]);
		munmap(mem, 2 * CALL_STACK);
		return -e;
	}
	struct init_args *a = &p->a;
	a->c = c;
	a->cmd_fd = cv[1];
	a->go_fd = gv[1];
	a->sh_stack = mem + CALL_STACK; // the shell's starter: the lower half
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int flags = CLONE_VM | CLONE_NEWPID | CLONE_PIDFD | SIGCHLD | (c->own_userns ? CLONE_NEWUSER : 0);
	int pid = clone(call_init, mem + 2 * CALL_STACK, flags, a, pidfd);
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(cv[1]);
	close(gv[1]);
	if (pid < 0) {
		close(cv[0]);
		close(gv[0]);
		munmap(mem, 2 * CALL_STACK);
		return -err;
	}
	int fds[3] = { -1, -1, -1 }, nfds = 0;
	char b;
	recv_fds(gv[0], &b, 1, fds, &nfds); // ready (with the trap's listener), or EOF: failed
	for (int i = 1; i < nfds; i++) close(fds[i]);
	*trap = fds[0];
	*cmd = cv[0];
	*go = gv[0];
	*stack = mem;
	return pid;
}

static void hearth_free_command(struct hearth_call *c) {
	if (c->cmd_mem) munmap(c->cmd_mem, c->cmd_len);
	c->cmd_mem = NULL;
}

static void hearth_free_stack(void *stack) { munmap(stack, 2 * CALL_STACK); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cellSpawnable: this build can start calls from a cell (cgo on Linux).
const cellSpawnable = true

// goSpin is how long, in microseconds, a command's starter waits awake for
// its go before it sleeps: the server's checks take 0.1–0.3 ms.
const goSpin = 400

// callSpec is one call for prepareCall (the confinement) and launch (the
// command).
type callSpec struct {
	rulesetFD    int // -1: none
	rulesetFlags uint32
	ownUserNS    bool // a user namespace of the call's own, mapping uid and gid to themselves
	uid, gid     int
	nproc        int // RLIMIT_NPROC in that namespace
	cgroupFD     int // the call's pids cgroup's cgroup.procs, -1: none
	statusFD     int
	grace        int  // ms
	trap         bool // under the file-change trap (trapProgram), its listener made with the init
}

// callCommand is what a prepared init runs.
type callCommand struct {
	outFD     int
	inFD      int  // the shell's stdin
	tty       bool // inFD is a terminal: the shell's controlling one
	dir       string
	path      string // argv[0] when ""
	argv, env []string
}

// preparedCall is a call's init, confined in its pid namespace and waiting
// for its command (launch, or sendCommand by whoever holds cmd) and its go,
// or its end (discard). It lives from prepareCall until release, once the
// init has been reaped.
type preparedCall struct {
	pid, pidfd int
	trap       int // the file-change trap's listener, -1: none; the caller's to close
	cmd        int // the command socket's other end, -1 once handed over or closed
	gofd       int // the go socket's other end, -1 once closed
	stack      unsafe.Pointer
	p          *C.struct_hearth_prepared // C memory the init reads
}

// prepareCall starts spec's init in a new pid namespace; it returns once
// the init is confined and waits for its command, or has failed (its
// report then comes on spec.statusFD).
func prepareCall(spec callSpec) (*preparedCall, error) {
	p := (*C.struct_hearth_prepared)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_hearth_prepared{}))))
	c := &p.c
	c.ruleset_fd = C.int(spec.rulesetFD)
	c.ruleset_flags = C.uint(spec.rulesetFlags)
	if spec.ownUserNS {
		c.own_userns = 1
		setCString(c.uid_map[:], fmt.Sprintf("%d %d 1", spec.uid, spec.uid))
		setCString(c.gid_map[:], fmt.Sprintf("%d %d 1", spec.gid, spec.gid))
	}
	c.nproc = C.long(spec.nproc)
	c.cgroup_fd = C.int(spec.cgroupFD)
	c.out_fd, c.null_fd, c.go_fd, c.status_fd = -1, -1, -1, C.int(spec.statusFD)
	c.grace_ms = C.int(spec.grace)
	if runtime.NumCPU() > 1 { // on one CPU, waiting awake would keep the server from sending the go
		c.spin_us = goSpin
	}
	if spec.trap {
		c.trap_prog = trapProgram()
	}
	pc := &preparedCall{pidfd: -1, trap: -1, cmd: -1, gofd: -1, p: p}
	var fd, cmd, gofd, trap C.int = -1, -1, -1, -1
	r := C.hearth_prepare(p, &fd, &cmd, &gofd, &trap, &pc.stack)
	if r < 0 {
		C.free(unsafe.Pointer(p))
		return nil, fmt.Errorf("start the call: %w", syscall.Errno(-r))
	}
	pc.pid, pc.pidfd, pc.trap, pc.cmd, pc.gofd = int(r), int(fd), int(trap), int(cmd), int(gofd)
	return pc, nil
}

// launch hands cmd to the prepared init, which sets the call up and runs
// it at goAhead (or reports its failure); the caller keeps pid and pidfd,
// and releases the call once its init has exited.
func (pc *preparedCall) launch(cmd callCommand) error {
	msg, err := commandMessage(cmd)
	if err != nil {
		return err
	}
	return sendCommand(pc.cmd, msg, cmd.outFD, cmd.inFD)
}

// goAhead lets a launched command run.
func (pc *preparedCall) goAhead() {
	goAhead(pc.gofd)
	pc.closeSockets()
}

// goAhead sends the go on a prepared init's go socket (the server's, or
// the daemon's copy of a handed spare's) and reports whether it went.
func goAhead(gofd int) bool {
	for {
		err := unix.Sendto(gofd, []byte{'x'}, unix.MSG_NOSIGNAL, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// discard makes a prepared init that will run nothing exit (with no
// report before its command, a status of 127 after); the caller still
// reaps it through pidfd and releases it.
func (pc *preparedCall) discard() { pc.closeSockets() }

func (pc *preparedCall) closeSockets() {
	for _, fd := range []*int{&pc.cmd, &pc.gofd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// release frees the call's spec, command and stacks: its init has exited
// (and so has the shell's starter, which shared them).
func (pc *preparedCall) release() {
	C.hearth_free_command(&pc.p.c)
	C.free(unsafe.Pointer(pc.p))
	C.hearth_free_stack(pc.stack)
	pc.p, pc.stack = nil, nil
}

func setCString(dst []C.char, s string) {
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = C.char(s[i])
	}
}

// callSetupSteps name the init's set-up steps in its failure reports.
var callSetupSteps = map[int]string{
	1: "deny setgroups in the call's user namespace", 2: "map the call's uid", 3: "map the call's gid",
	4: "bound the call's processes", 5: "join the call's pids cgroup", 6: "enter the working directory",
	7: "set no_new_privs", 8: "confine the call with Landlock", 9: "start the shell", 10: "drop capabilities",
	11: "trap the call's file changes", 12: "take the command's descriptors", 13: "read the command",
}
