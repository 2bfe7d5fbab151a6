package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/hearthd/hearth/rpc"
)

// BenchmarkColdStart is the time from exec of `hearth acp` with no daemon
// running to its answer to initialize: the relay starts the daemon, waits
// for it to be ready and relays the call. Each iteration has its own socket
// and data directory (a new database) and stops its daemon afterwards,
// outside the timer. Reported: median and max in ms.
//
//	go test -run '^$' -bench ColdStart -benchtime 10x ./cmd/hearth
func BenchmarkColdStart(b *testing.B) {
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		e := newE2E(b)
		cmd := exec.Command(binary, "acp")
		cmd.Env = e.env
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		b.StartTimer()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"))
		line, err := bufio.NewReader(stdout).ReadString('\n')
		took = append(took, time.Since(start))
		b.StopTimer()
		if err != nil || !strings.Contains(line, `"result"`) {
			b.Fatalf("initialize: %q %v", line, err)
		}
		stdin.Close()
		cmd.Wait()
		stopDaemonAt(b, e.sock)
		e.sim.Close()
		b.StartTimer()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(0, "ns/op")
}

// stopDaemonAt asks the daemon on sock for its pid, sends it SIGTERM and
// waits for it to hang up.
func stopDaemonAt(tb testing.TB, sock string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := rpc.Dial(ctx, sock)
	if err != nil {
		return // none runs
	}
	defer c.Close()
	var st rpc.Status
	if err := c.Call(ctx, rpc.MethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}, nil); err != nil {
		tb.Fatal(err)
	}
	if err := c.Call(ctx, rpc.MethodHearthStatus, nil, &st); err != nil {
		tb.Fatal(err)
	}
	p, _ := os.FindProcess(st.PID)
	p.Signal(syscall.SIGTERM)
	select {
	case <-c.Done():
	case <-ctx.Done():
		tb.Fatalf("the daemon (pid %d) did not stop", st.PID)
	}
}
