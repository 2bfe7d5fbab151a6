package main

import "golang.org/x/sys/unix"

// notDumpable clears the daemon's dumpable flag: no core dump holds the API
// key, and a process of the same user that is not root can neither ptrace
// the daemon nor read its /proc files (memory, environ, fds). Reset by
// execve, so it is set in the final image.
func notDumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// helperExe is the binary the shell tool re-executes as its sandbox
// helper: this very image, even if the file was replaced since.
func helperExe() (string, error) { return "/proc/self/exe", nil }
