package sandbox

import "golang.org/x/sys/unix"

// trapArch is the audit arch of the syscalls trapChanges knows.
const trapArch = unix.AUDIT_ARCH_X86_64

// trapSyscalls are amd64's syscalls that change files (see trapTargets).
var trapSyscalls = []trapSyscall{
	{nr: unix.SYS_OPEN, flagsArg: 1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
	{nr: unix.SYS_OPENAT, flagsArg: 2, targets: []trapTarget{{dirArg: 0, pathArg: 1}}},
	{nr: unix.SYS_OPENAT2, flagsArg: -1, openHow: true, targets: []trapTarget{{dirArg: 0, pathArg: 1}}},
	{nr: unix.SYS_CREAT, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
	{nr: unix.SYS_TRUNCATE, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
	{nr: unix.SYS_UNLINK, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
	{nr: unix.SYS_UNLINKAT, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: 1}}},
	{nr: unix.SYS_RENAME, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}, {dirArg: -1, pathArg: 1}}},
	{nr: unix.SYS_RENAMEAT, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: 1}, {dirArg: 2, pathArg: 3}}},
	{nr: unix.SYS_RENAMEAT2, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: 1}, {dirArg: 2, pathArg: 3}}},
	{nr: unix.SYS_LINK, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 1}}},
	{nr: unix.SYS_LINKAT, flagsArg: -1, targets: []trapTarget{{dirArg: 2, pathArg: 3}}},
	{nr: unix.SYS_SYMLINK, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 1}}},
	{nr: unix.SYS_SYMLINKAT, flagsArg: -1, targets: []trapTarget{{dirArg: 1, pathArg: 2}}},
	{nr: unix.SYS_CHMOD, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
	{nr: unix.SYS_FCHMOD, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: -1}}},
	{nr: unix.SYS_FCHMODAT, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: 1}}},
	{nr: unix.SYS_FCHMODAT2, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: 1}}},
	{nr: unix.SYS_MKNOD, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
	{nr: unix.SYS_MKNODAT, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: 1}}},
	{nr: unix.SYS_MKDIR, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
	{nr: unix.SYS_MKDIRAT, flagsArg: -1, targets: []trapTarget{{dirArg: 0, pathArg: 1}}},
	{nr: unix.SYS_RMDIR, flagsArg: -1, targets: []trapTarget{{dirArg: -1, pathArg: 0}}},
}
