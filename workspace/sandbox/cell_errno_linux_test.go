//go:build linux && cgo

package sandbox

import (
	"os"
	"runtime"
	"testing"
	"time"
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
		pc, status := testInit(t)
		start := time.Now()
		if err := pc.launch(callCommand{outFD: int(devnull.Fd()), inFD: int(devnull.Fd()), dir: dir, path: "/bin/true", argv: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
		pc.goAhead()
		dirtyErrnoUntil(status)
		took := time.Since(start)
		rep, n := endTestInit(pc, status)
		if n != 8 || le32(rep[:4]) != 0 || le32(rep[4:]) != 0 {
			t.Fatalf("call %d: report %x (%d bytes), want kind 0 (nothing left), status 0", i, rep[:n], n)
		}
		if took > KillGrace/2 {
			t.Fatalf("call %d: `true` took %v to be reported", i, took)
		}
	}
}
