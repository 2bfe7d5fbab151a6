package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"golang.org/x/sys/unix"

	"github.com/hearthd/hearth/rpc"
)

// The daemon `hearth acp` starts belongs to no client: killing the starting
// relay's whole process tree and its process group (what acpx does to its
// agent on exit) leaves the daemon running, and another editor's session on
// it answers the next prompt.
func TestDaemonOutlivesStartersTree(t *testing.T) {
	e := newE2E(t)
	relay := exec.Command(binary, "acp")
	relay.Env = e.env
	relay.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, as a client's agent has
	stdin, _ := relay.StdinPipe()
	stdout, _ := relay.StdoutPipe()
	if err := relay.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { relay.Wait(); close(exited) }()
	t.Cleanup(func() { syscall.Kill(-relay.Process.Pid, syscall.SIGKILL); <-exited })
	if text := newACP(t, pipeRW{stdout, stdin}).turn(t, e.root, "first editor"); !strings.Contains(text, "first editor") {
		t.Fatalf("answer through the relay: %q", text)
	}

	// Another editor, straight on the socket, with a session of its own.
	conn, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	other := newACP(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := other.c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var st rpc.Status
	if err := other.c.Call(ctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	daemonFD, err := unix.PidfdOpen(st.PID, 0)
	if err != nil {
		t.Fatalf("pidfd of the daemon %d: %v", st.PID, err)
	}
	t.Cleanup(func() { endDaemon(t, daemonFD); unix.Close(daemonFD) })
	var ns acp.NewSessionResponse
	if err := other.c.Call(ctx, rpc.MethodSessionNew, acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{}}, &ns); err != nil {
		t.Fatal(err)
	}

	// The relay's whole tree, as a client that kills its agent's does.
	tree := descendantsOf(relay.Process.Pid)
	for _, pid := range tree {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	syscall.Kill(-relay.Process.Pid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed relay did not exit")
	}

	var r acp.PromptResponse
	err = other.c.Call(ctx, rpc.MethodSessionPrompt, acp.PromptRequest{SessionId: ns.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("still there?")}}, &r)
	if err != nil || r.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("the other editor's prompt after the starter's tree was killed (%d processes: %v): %v %s", len(tree), tree, err, r.StopReason)
	}
	if ppid, ok := ppidOf(st.PID); !ok || ppid == relay.Process.Pid {
		t.Errorf("the daemon's parent is %d (read: %v), the relay was %d", ppid, ok, relay.Process.Pid)
	}
}

// descendantsOf lists every process whose parent chain leads to pid, from
// /proc.
func descendantsOf(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := ppidOf(p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// ppidOf reads pid's parent from /proc/pid/stat.
func ppidOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// endDaemon ends a daemon this test did not start as its child: SIGTERM
// through its pidfd, then the pidfd's readability (the process's exit).
func endDaemon(t *testing.T, fd int) {
	if err := unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0); err != nil {
		return // gone already
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if n > 0 {
			return
		}
		break
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	t.Errorf("the daemon did not exit within 20 s of SIGTERM")
}
