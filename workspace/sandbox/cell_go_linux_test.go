//go:build linux && cgo

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A launched init sets its command up but runs it only at the go: a
// command the server drops (its rules changed, a socket could not be
// hidden) never starts.
func TestLaunchedCallRunsOnlyAtTheGo(t *testing.T) {
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	dir := t.TempDir()
	for _, goAhead := range []bool{false, true} {
		var status [2]int
		if err := unix.Pipe2(status[:], unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		pc, err := prepareCall(callSpec{rulesetFD: -1, cgroupFD: -1, ownUserNS: true, uid: os.Getuid(), gid: os.Getgid(),
			statusFD: status[1], grace: int(KillGrace / time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(status[1])
		if pc.trap >= 0 {
			unix.Close(pc.trap)
		}
		mark := filepath.Join(dir, "ran")
		pc.launch(callCommand{outFD: int(devnull.Fd()), inFD: int(devnull.Fd()), dir: dir, path: "/usr/bin/touch", argv: []string{"touch", mark}})
		if goAhead {
			pc.goAhead()
		} else {
			pc.discard()
		}
		var rep [8]byte
		n := readFull(status[0], rep[:])
		unix.Close(status[0])
		waitInit(pc.pidfd)
		unix.Close(pc.pidfd)
		pc.release()
		ws := unix.WaitStatus(le32(rep[4:]))
		_, statErr := os.Stat(mark)
		switch {
		case n != 8 || le32(rep[:4]) != 0:
			t.Fatalf("go %v: report %x (%d bytes), want kind 0", goAhead, rep[:n], n)
		case goAhead && (ws.ExitStatus() != 0 || statErr != nil):
			t.Fatalf("with the go: status %v, %v; want the command run", ws, statErr)
		case !goAhead && (ws.ExitStatus() != 127 || statErr == nil):
			t.Fatalf("discarded: status %v, %s exists: %v; want 127 and nothing run", ws, mark, statErr == nil)
		}
	}
}
