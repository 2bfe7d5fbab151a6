//go:build linux

package daemon

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

// passConnSubcommand connects to the socket args[0] names, hands the
// connection to its parent over the unix socket it has as fd 3, and
// exits: a connection whose maker is gone.
const passConnSubcommand = "__pass-conn"

func init() { probes[passConnSubcommand] = passConn }

func passConn(args []string) int {
	c, err := net.Dial("unix", args[0])
	if err != nil {
		return 1
	}
	f, err := c.(*net.UnixConn).File()
	if err != nil {
		return 1
	}
	back, err := net.FileConn(os.NewFile(3, "back"))
	if err != nil {
		return 1
	}
	if _, _, err := back.(*net.UnixConn).WriteMsgUnix([]byte{0}, syscall.UnixRights(int(f.Fd())), nil); err != nil {
		return 1
	}
	return 0
}

// takeConn runs passConn and returns the connection it made, once it has
// exited and been reaped.
func takeConn(t *testing.T, socket string) net.Conn {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
	defer mine.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, passConnSubcommand, socket)
	cmd.ExtraFiles = []*os.File{theirs}
	err = cmd.Run()
	theirs.Close()
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.FileConn(mine)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	oob := make([]byte, syscall.CmsgSpace(4))
	_, oobn, _, _, err := back.(*net.UnixConn).ReadMsgUnix(make([]byte, 1), oob)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("control messages %v, %v", msgs, err)
	}
	got, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(got) != 1 {
		t.Fatalf("rights %v, %v", got, err)
	}
	f := os.NewFile(uintptr(got[0]), "conn")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A permission request never goes to a connection that may belong to a
// tool call. Here the connection was admitted (no call ran), but the
// process that made it is gone when, with a call running, it would be
// asked: the daemon cannot tell whose it is, so it does not ask, and the
// call does not run.
func TestPermissionNotAskedOfACallsConnection(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	a := &asker{answers: []string{"allow_once"}}
	ed := td.editorWith(takeConn(t, td.cfg.Socket), a.onCall)
	ed.initialize() // admitted: no call was running
	id := ed.newSession(td.root)
	runningCall(t)
	if stop := ed.prompt(id, shellPrompt(t, "echo ran && touch ran.txt")); stop != acp.StopReasonEndTurn {
		t.Fatalf("stop %s", stop)
	}
	if out := lastToolOutput(t, td); !strings.Contains(out, "may belong to a running command") || strings.HasPrefix(out, "ran\n") {
		t.Errorf("the call's output: %q", out)
	}
	if a.asked() != 0 {
		t.Errorf("the connection was asked %d times", a.asked())
	}
	var st rpc.Status
	ed.must(rpc.MethodHearthStatus, nil, &st) // the editor itself is still served
}
