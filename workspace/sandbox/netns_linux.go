package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// emptyNetwork is how the helper starts a command's second stage with the
// network off: in a user namespace of its own (which lets an unprivileged
// user make the next one) holding a network namespace of its own, whose
// only interface is a loopback that is down. Every IP socket then fails to
// reach anything — TCP, UDP, Multipath TCP, localhost included — and
// abstract unix sockets, which belong to the network namespace, are out of
// reach too. The user namespace maps the user's own uid and gid to
// themselves, so `id` and file ownership look as before; root maps every
// id, keeping its access to other users' files. Where user namespaces are
// refused (a sysctl, AppArmor, a container's seccomp), starting fails and
// the helper falls back to Landlock's TCP rules alone. With mounts set, the
// command gets a mount namespace of its own too, where the second stage
// hides the machine's unix sockets (setupCallMounts; see ownNamespaces).
func emptyNetwork(mounts bool) *syscall.SysProcAttr {
	uid, gid, size := os.Getuid(), os.Getgid(), 1
	if uid == 0 {
		uid, gid, size = 0, 0, math.MaxInt32
	}
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET)
	if mounts {
		flags |= syscall.CLONE_NEWNS
	}
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: size}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: size}},
		// An unprivileged process may map its gid only with setgroups
		// denied; root may leave it allowed (su and the like keep working).
		GidMappingsEnableSetgroups: uid == 0,
	}
}

// ownNamespaces is how the helper starts a command's second stage: in a
// user and a mount namespace of its own (where setupCallMounts hides the
// machine's unix sockets), and, with netOff, a network namespace of its
// own too (emptyNetwork). The second stage keeps CAP_SYS_ADMIN in its user
// namespace across its exec as an ambient capability — an ordinary user's
// process loses every capability at execve otherwise, and could mount
// nothing — and drops it before it runs the shell.
func ownNamespaces(netOff bool) *syscall.SysProcAttr {
	attr := emptyNetwork(true)
	if !netOff {
		attr.Cloneflags &^= syscall.CLONE_NEWNET
	}
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	return attr
}

// checkNetworkFlag, as the helper's only argument, makes it report whether
// it can start a command in an empty network namespace (exit 0) or why not.
const checkNetworkFlag = "--check-network"

// tryEmptyNetwork starts /bin/sh -c true in an empty network namespace.
func tryEmptyNetwork() error {
	cmd := exec.Command("/bin/sh", "-c", "true")
	cmd.SysProcAttr = emptyNetwork(false)
	return cmd.Run()
}

// mountnsErr is why this process cannot start a command in a user and
// mount namespace of its own (ownNamespaces), or nil; found once (doctor's
// view).
var mountnsErr = sync.OnceValue(func() error {
	cmd := exec.Command("/bin/sh", "-c", "true")
	cmd.SysProcAttr = ownNamespaces(false)
	return cmd.Run()
})

// netnsErr is why this process cannot start a command in an empty network
// namespace, or nil; found once (doctor's view).
var netnsErr = sync.OnceValue(tryEmptyNetwork)

// helperNetns caches helperNetnsErr by helper argv.
var helperNetns sync.Map // string → netnsResult

type netnsResult struct{ err error }

// helperNetnsErr asks the helper whether it can start a command in an empty
// network namespace. The helper, not this process, is asked: a daemon that
// cleared its dumpable flag cannot write its children's uid_map when it
// runs as an ordinary user, while the helper, a fresh exec, can.
func helperNetnsErr(helper []string) error {
	key := strings.Join(helper, "\x00")
	if r, ok := helperNetns.Load(key); ok {
		return r.(netnsResult).err
	}
	var r netnsResult
	out, err := exec.Command(helper[0], append(slices.Clone(helper[1:]), checkNetworkFlag)...).Output()
	if msg := strings.TrimSpace(string(out)); err != nil && msg != "" {
		r.err = errors.New(msg)
	} else if err != nil {
		r.err = fmt.Errorf("the sandbox helper: %w", err)
	}
	helperNetns.Store(key, r)
	return r.err
}
