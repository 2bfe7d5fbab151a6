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
		pc, status := testInit(t)
		mark := filepath.Join(dir, "ran")
		if err := pc.launch(callCommand{outFD: int(devnull.Fd()), inFD: int(devnull.Fd()), dir: dir, path: "/usr/bin/touch", argv: []string{"touch", mark}}); err != nil {
			t.Fatal(err)
		}
		if goAhead {
			pc.goAhead()
		} else {
			pc.discard()
		}
		rep, n := endTestInit(pc, status)
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

// A command whose counts do not match its bytes is refused by the init
// (step 13), and one with a NUL byte inside a string never leaves the
// daemon: neither runs anything.
func TestMalformedCommandsRunNothing(t *testing.T) {
	if _, err := commandMessage(callCommand{dir: "/", argv: []string{"echo", "a\x00b"}}); err == nil {
		t.Error("a command with a NUL byte was encoded")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	msg, err := commandMessage(callCommand{dir: t.TempDir(), path: "/usr/bin/touch", argv: []string{"touch", "x"}})
	if err != nil {
		t.Fatal(err)
	}
	msg[4] = 9 // nine arguments, where there is one
	pc, status := testInit(t)
	if err := sendCommand(pc.cmd, msg, int(devnull.Fd()), int(devnull.Fd())); err != nil {
		t.Fatal(err)
	}
	pc.goAhead()
	rep, n := endTestInit(pc, status)
	if n != 8 || le32(rep[:4]) != 1 || le32(rep[4:])>>16 != 13 {
		t.Fatalf("report %x (%d bytes), want kind 1, step 13 (read the command)", rep[:n], n)
	}
}

// testInit prepares a bare call init (a user namespace of its own, no
// rules, no trap) and returns it with the read end of its report pipe.
func testInit(t *testing.T) (*preparedCall, int) {
	t.Helper()
	var status [2]int
	if err := unix.Pipe2(status[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	pc, err := prepareCall(callSpec{rulesetFD: -1, cgroupFD: -1, ownUserNS: true, uid: os.Getuid(), gid: os.Getgid(),
		statusFD: status[1], grace: int(KillGrace / time.Millisecond)})
	unix.Close(status[1])
	if err != nil {
		unix.Close(status[0])
		t.Fatal(err)
	}
	if pc.trap >= 0 {
		unix.Close(pc.trap)
	}
	return pc, status[0]
}

// endTestInit reads a test init's report from status, reaps and releases
// the init, and returns the report and how many of its bytes came.
func endTestInit(pc *preparedCall, status int) ([8]byte, int) {
	var rep [8]byte
	n := readFull(status, rep[:])
	unix.Close(status)
	waitInit(pc.pidfd)
	unix.Close(pc.pidfd)
	pc.release()
	return rep, n
}

// readFull reads into b until it is full or the writer is gone, and
// returns how much it read.
func readFull(fd int, b []byte) int {
	got := 0
	for got < len(b) {
		n, err := unix.Read(fd, b[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		got += n
	}
	return got
}
