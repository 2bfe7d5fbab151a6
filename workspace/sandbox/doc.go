// Package sandbox runs the model's shell commands confined: Run starts one
// command line, in the workspace's cell where the sandbox has cells (one
// helper per workspace and network setting, namespaces set up once,
// commands forked from it, a pid namespace and a process bound per call),
// else through the per-command helper (`hearth __sandbox-exec`, Exec) or,
// with no helper, /bin/sh -c in a process group of its own; in a cell and
// with no helper, a line with no shell syntax (one program and literal
// words, direct.go) runs its program without the shell. Either way the
// command gets a private /tmp, the user's other sockets are hidden, the git
// directories are read-only (GitDirs), the network is cut when Network.Off
// asks for it (NetworkEnforced), and nothing it starts outlives the call;
// its output is kept head and tail (and shown live through Command.Show)
// and Outcome.Report words its end for the model. Start runs a command the
// same way as a Process that may outlive the call: its stdin a pipe or a
// pseudo-terminal (its controlling terminal) that Process.Write feeds, its
// output handed over as it comes, its end its own exit or Process.Kill.
// In a cell, a command given Command.Changes runs under a seccomp trap
// (trap_linux.go) that tells it of each file the command is about to
// change, before the change happens.
//
// It also holds the git guard pieces the workspace's tools share: where
// git's own files are (GitDirs, IsGitName, HasGitComponent) and the
// PlantGuard that disarms repositories a command plants in the workspace.
//
// Lifetimes: Config is set once per process (Set) and read by every call;
// a Command and its Outcome are plain values of one call; a Process lives
// from Start until it has ended, its owner Kills it at the latest when the
// owner closes; cells are the
// package's, each closed when idle and all at process exit
// (closeCells); CallPIDs lists the calls running now. The status
// functions (Status, NetworkStatus, SocketStatus, ProcessBoundStatus) are
// for `hearth doctor` and status.
//
// Build: the cells need cgo on Linux; without cgo, or off Linux, commands
// run through the helper or unconfined (helper_other.go, cell_other.go,
// cell_nocgo_linux.go), and the shell tool is unsupported where there is no
// Unix (run_other.go).
//
// Imports: the standard library, golang.org/x/sys, creack/pty (a
// Process's terminal), go-landlock and go-git's config format (a planted repository's settings); no hearth package. workspace, the daemon and cmd/hearth import it; it never
// imports workspace.
package sandbox
