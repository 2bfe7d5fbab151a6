package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Config says how the shell tool confines the commands the model runs. A
// process sets it once with Set before its first command (`hearth
// serve` does at start-up); it holds for the process's life.
//
// With a Helper, each command runs as Helper + policy + command: the helper
// (hearth's hidden `__sandbox-exec`, which calls Exec) makes itself
// the child subreaper of the call, confines itself with Landlock and starts
// /bin/sh -c command as its child; when the shell exits, or the call is
// cancelled or times out, it kills every process left of the call — those
// that left the process group with setsid or were double-forked included,
// since orphans are reparented to it — and reports the shell's exit status
// as its own. Without a Helper (the zero Config, and everywhere but Linux)
// the shell runs directly in a process group of its own, unconfined, and a
// process that leaves the group can outlive the call; Status says so.
type Config struct {
	// Helper is the argv prefix of the helper, e.g.
	// {"/usr/bin/hearth", "__sandbox-exec"}.
	Helper []string
	// Deny lists directories commands may neither read nor write: hearth's
	// data directory (hearth.db), its configuration directory (the env file
	// holding the API key) and its socket's directory. A denied directory
	// inside the workspace or the temp dir splits that grant (see
	// sandboxRules), so put them elsewhere.
	Deny []string
	// Write lists directories beyond the workspace and the temp dir that
	// commands may write: the user's caches (go build, npm, pip), so that
	// the model's `go test` or `npm install` works as the user's would.
	Write []string
	// Socket is the daemon's socket. Where a command runs in namespaces of
	// its own (user namespaces allowed) no path leads to it there: its
	// directory is covered with an empty tmpfs, or, when that directory
	// holds one commands may write, the socket alone (hideSocket).
	// Elsewhere the daemon's check of each connection's process
	// (daemon/socket_call.go) is the wall.
	Socket string
	// Pids bounds the processes (threads included) one command may hold at
	// once where the sandbox runs commands in cells (0: defaultPids, a
	// sixteenth of the machine's pid space between 512 and 8192).
	Pids int
	// Sockets lists the unix sockets the user lets commands reach
	// (HEARTH_SANDBOX_SOCKETS: an ssh-agent's, say). Every other socket
	// with a path is hidden from commands where they run in namespaces of
	// their own (setupCallMounts).
	Sockets []string
	// RuntimeDir is $XDG_RUNTIME_DIR, where the user's session keeps its
	// sockets (the session bus, Wayland, pipewire, gpg-agent): commands
	// see an empty directory there.
	RuntimeDir string
}

var sandboxConfig atomic.Pointer[Config]

// Set sets how this process's shell tool runs commands.
func Set(s Config) {
	s.Helper = slices.Clone(s.Helper)
	s.Deny = slices.Clone(s.Deny)
	s.Write = slices.Clone(s.Write)
	s.Sockets = slices.Clone(s.Sockets)
	sandboxConfig.Store(&s)
	closeCells() // the running cells apply the policy they were started with
}

// current is the Config Set set, or the zero one.
func current() Config {
	if s := sandboxConfig.Load(); s != nil {
		return *s
	}
	return Config{}
}

// CommandWrites lists where the shell tool's commands in the workspace at
// root may write when this process confines them — the sandbox helper is
// set (Set) and the kernel has Landlock: root, the temp dir and the
// user's caches (Config.Write) — or nil when they are not confined and may
// write wherever the user can.
func CommandWrites(root string) []string {
	sb := current()
	if !sandboxSupported || len(sb.Helper) == 0 || !landlockWorks() {
		return nil
	}
	return append([]string{root, sandboxTempDir()}, sb.Write...)
}

// sandboxTempDir is the temp dir commands may write: $TMPDIR, else /tmp.
func sandboxTempDir() string { return os.TempDir() }

// serveFlag, first among the helper's arguments, makes it a cell server:
// `hearth __sandbox-exec --serve POLICY...`, started by the daemon in a
// user and mount namespace of its own (and a network namespace when the
// network is off), its socket to the daemon on descriptor 3.
const serveFlag = "--serve"

// unixTableFlag names the host's unix socket table for a cell server,
// which may have a network namespace of its own.
const unixTableFlag = "--unix-table"

// pidsFlag bounds the number of processes (threads included) one command
// of a cell may hold at once.
const pidsFlag = "--pids"

// noNetworkFlag asks the helper to cut the command off the network.
const noNetworkFlag = "--no-network"

// The helper's flags for the mount namespace of a command (see callMounts):
// the daemon's socket to hide, the directory to bind over /tmp, the
// runtime directory to cover, a socket to leave reachable (repeated), a git
// directory to protect (repeated).
const (
	hideSocketFlag  = "--hide-socket"
	tmpFlag         = "--tmp"
	runtimeDirFlag  = "--runtime-dir"
	allowSocketFlag = "--allow-socket"
	gitFlag         = "--git"
)

// helperArgs is the helper's argument list after Helper for one command:
// --write for each directory commands may write, --deny for each denied
// one, --no-network when net is off, access's flag (Access), the mount
// namespace's flags, then -- and the command line.
func (s Config) helperArgs(root, command string, net Network, access Access) []string {
	args := slices.Clone(s.Helper)
	args = append(args, "--write", root, "--write", sandboxTempDir())
	for _, d := range s.Write {
		args = append(args, "--write", d)
	}
	for _, d := range s.Deny {
		args = append(args, "--deny", d)
	}
	if net.Off {
		args = append(args, noNetworkFlag)
	}
	if f := access.flag(); f != "" {
		args = append(args, f)
	}
	if s.Socket != "" {
		args = append(args, hideSocketFlag, s.Socket)
	}
	// Without it (it could not be made), /tmp is an empty tmpfs per command.
	if tmp, err := privateTmpDir(root); err == nil && !insideAny(tmp, s.Deny) {
		args = append(args, tmpFlag, tmp)
	}
	if s.RuntimeDir != "" {
		args = append(args, runtimeDirFlag, s.RuntimeDir)
	}
	for _, a := range s.Sockets {
		args = append(args, allowSocketFlag, a)
	}
	for _, g := range gitMountPaths(root) {
		args = append(args, gitFlag, g)
	}
	return append(args, "--", command)
}

// serveArgs is the argument list of the cell server for the workspace at
// root and one network and access: Helper, --serve, the policy of helperArgs (the daemon's socket
// hidden whatever the network: a cell always has a mount namespace of its
// own), the bound on each call's processes, and where the host's unix
// socket table is read (the daemon's: the cell may have a network
// namespace of its own, whose table is empty).
func (s Config) serveArgs(root string, net Network, access Access, pids int) []string {
	policy := s.helperArgs(root, "", net, access)
	policy = policy[len(s.Helper) : len(policy)-2] // without -- COMMAND
	return slices.Concat(s.Helper, []string{serveFlag}, policy,
		[]string{pidsFlag, strconv.Itoa(pids), unixTableFlag, fmt.Sprintf("/proc/%d/net/unix", os.Getpid())})
}

// pidsBound is the bound on one command's processes: Pids, else
// defaultPids.
func (s Config) pidsBound() int {
	if s.Pids > 0 {
		return s.Pids
	}
	return defaultPids()
}

// PrivateTmpRel is where, under the temp dir, the commands of the
// workspace at root (a canonical path) get their /tmp (privateTmpDir):
// hearth-UID/tmp/HASH, HASH naming root.
func PrivateTmpRel(root string) string {
	sum := sha256.Sum256([]byte(root))
	return fmt.Sprintf("hearth-%d/tmp/%s", os.Getuid(), hex.EncodeToString(sum[:8]))
}

// insideAny reports whether path is one of dirs or lies below one.
func insideAny(path string, dirs []string) bool {
	for _, d := range dirs {
		d = filepath.Clean(d)
		if path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
