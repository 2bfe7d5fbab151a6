//go:build linux && cgo

package sandbox

import (
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A call's init shares the memory of the cell server's thread that made
// it, thread-local storage included, so a libc errno would be that
// thread's too, written while the init runs. Once its command has exited,
// the init must see at once that nothing is left in its namespace — not
// read the server's errno, miss ECHILD and wait out KillGrace before its
// report (the command then takes a second).
func TestCallInitEndsPromptlyWhateverTheServersErrno(t *testing.T) {
	runtime.LockOSThread() // prepare, launch and the errno writes on one thread
	defer runtime.UnlockOSThread()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	dir := t.TempDir()
	for i := 0; i < 200; i++ {
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
		start := time.Now()
		pc.launch(callCommand{outFD: int(devnull.Fd()), inFD: int(devnull.Fd()), dir: dir, path: "/bin/true", argv: []string{"true"}})
		pc.goAhead()
		dirtyErrnoUntil(status[0])
		took := time.Since(start)
		var rep [8]byte
		n := readFull(status[0], rep[:])
		unix.Close(status[0])
		waitExit(pc.pidfd)
		unix.Close(pc.pidfd)
		var ws unix.WaitStatus
		unix.Wait4(pc.pid, &ws, 0, nil)
		pc.release()
		if n != 8 || le32(rep[:4]) != 0 || le32(rep[4:]) != 0 {
			t.Fatalf("call %d: report %x (%d bytes), want kind 0 (nothing left), status 0", i, rep[:n], n)
		}
		if took > KillGrace/2 {
			t.Fatalf("call %d: `true` took %v to be reported", i, took)
		}
	}
}
