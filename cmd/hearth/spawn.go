package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
)

// spawnCommand is the hidden subcommand between a client and the daemon it
// starts (`hearth __spawn serve …`): it starts `hearth serve …` detached
// (detach: a session of its own) and exits at once, so the daemon's parent
// is gone before the client goes on. The daemon is reparented to init (or
// the nearest subreaper) and is no descendant of the client: a client
// whose own client kills its process tree or its process group on exit
// (acpx does) leaves it running for every other editor. main dispatches it
// before anything else.
const spawnCommand = "__spawn"

// readyFD is the descriptor number the started daemon's end of the
// readiness pipe has in the middle process and in the daemon (the first of
// ExtraFiles).
const readyFD = 3

// runSpawn is the middle process: it starts args (`serve …`) as a new
// process of this binary, hands on the readiness pipe --ready-fd names
// (the only descriptor beyond stdio it passes), and does not wait. The
// client waits for this process, so it leaves no zombie, and for the
// daemon's word on the pipe.
func runSpawn(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearth: start the daemon:", err)
		return 1
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if i := slices.Index(args, "--ready-fd"); i >= 0 && i+1 < len(args) {
		fd, err := strconv.Atoi(args[i+1])
		if err != nil || fd != readyFD {
			fmt.Fprintf(os.Stderr, "hearth: start the daemon: --ready-fd %s: want %d\n", args[i+1], readyFD)
			return 2
		}
		cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(fd), "ready")}
	}
	detach(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "hearth: start the daemon:", err)
		return 1
	}
	cmd.Process.Release()
	return 0
}
