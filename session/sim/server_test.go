package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// simGoroutines returns the stacks of goroutines running code of this package outside tests.
func simGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		s := string(g)
		if strings.Contains(s, "hearth/session/sim.") && !strings.Contains(s, "sim.Test") && !strings.Contains(s, "testing.tRunner") {
			out = append(out, s)
		}
	}
	return out
}

// waitNoSimGoroutines checks that no goroutine runs the simulator's code any more. Close waits
// on WaitGroups, and a goroutine that has called Done may still be returning for a moment, so
// this polls briefly (as goleak does) instead of failing on that instant.
func waitNoSimGoroutines(t *testing.T) {
	t.Helper()
	poll(t, func() bool { return len(simGoroutines()) == 0 }, func() string {
		return "goroutines of the simulator alive after Close:\n" + strings.Join(simGoroutines(), "\n\n")
	})
}

// poll waits up to 2 s for cond, for facts no event announces (goroutine exits).
func poll(t *testing.T, cond func() bool, msg func() string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg())
		}
		<-tick.C
	}
}

func TestCloseEndsEverythingWithoutLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	srv := New(Options{Cost: Cost{TokensPerSecond: 20}, PushAgeLimit: true})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	// A WebSocket mid-response on two lanes, an idle WebSocket, an SSE stream mid-response.
	busy, _, err := dialRaw(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bc := &client{t: t, conn: busy}
	for _, lane := range []string{"a", "b"} {
		bc.send(map[string]any{"type": "response.create", "stream_id": lane, "input": "sim:tokens=1000"})
	}
	for created := 0; created < 2; { // both requests are recorded and running
		if bc.read().Type == "response.created" {
			created++
		}
	}
	idle, _, err := dialRaw(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	tr := &http.Transport{}
	req, _ := http.NewRequest(http.MethodPost, base+"/responses", strings.NewReader(`{"stream":true,"input":"sim:tokens=1000"}`))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
		t.Fatalf("SSE stream: %v", err)
	}

	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	waitNoSimGoroutines(t)
	for name, c := range map[string]*client{"busy": bc, "idle": {t: t, conn: idle}} {
		if code := c.closeCode(); code != websocket.CloseGoingAway {
			t.Fatalf("%s connection: close code %d, want 1001", name, code)
		}
	}
	if _, err := readSSE(resp); err == nil {
		t.Fatal("SSE stream ended cleanly after Close, want an error")
	}
	tr.CloseIdleConnections()
	busy.Close()
	idle.Close()
	// Every record was answered, the interrupted ones as connection_closed.
	recs := waitRecs(t, srv, 3)
	for _, r := range recs {
		if r.Outcome != OutcomeClosed {
			t.Fatalf("record outcome %q, want %q", r.Outcome, OutcomeClosed)
		}
	}
	// The client side's own goroutines (HTTP transport) exit asynchronously: poll briefly.
	poll(t, func() bool { return runtime.NumGoroutine() <= before }, func() string {
		return fmt.Sprintf("%d goroutines before, %d after Close", before, runtime.NumGoroutine())
	})

	if _, err := srv.Start(); err == nil {
		t.Fatal("Start after Close succeeded")
	}
	srv.Close() // idempotent
}

func TestCloseAsHandler(t *testing.T) {
	srv := New(Options{})
	ts := httptestServer(t, srv)
	conn, _, err := dialRaw(ts+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	srv.Close()
	waitNoSimGoroutines(t)
	c := &client{t: t, conn: conn}
	if code := c.closeCode(); code != websocket.CloseGoingAway {
		t.Fatalf("close code %d", code)
	}
	resp, err := http.Post(ts+"/v1/responses", "application/json", strings.NewReader(`{"input":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("after Close: HTTP %d", resp.StatusCode)
	}
}

func TestListenAndServe(t *testing.T) {
	listening := make(chan string, 1)
	srv := New(Options{OnListen: func(base string) { listening <- base }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0") }()
	var base string
	select {
	case base = <-listening:
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	}
	completed(t, dial(t, base).create(map[string]any{"input": "x"}))
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ListenAndServe: %v", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("ListenAndServe did not return after cancel")
	}
	if _, _, err := dialRaw(base, nil); err == nil {
		t.Fatal("still listening after ListenAndServe returned")
	}
	if err := New(Options{}).ListenAndServe(context.Background(), "127.0.0.1:bad"); err == nil {
		t.Fatal("bad address accepted")
	}
}

func TestWaitReceivedHonoursContext(t *testing.T) {
	srv, base := newSim(t, Options{Cost: Cost{FirstToken: time.Hour}})
	c := dial(t, base)
	c.send(map[string]any{"type": "response.create", "input": "x"})
	c.read() // response.created: the request is recorded but not answered
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	recs, err := srv.WaitReceived(ctx, 1)
	if !errors.Is(err, context.DeadlineExceeded) || len(recs) != 1 || recs[0].Answered {
		t.Fatalf("WaitReceived: %v, %d records", err, len(recs))
	}
	if got := srv.Received(); len(got) != 1 || got[0].Type != "response.create" {
		t.Fatalf("Received %+v", got)
	}
}

func httptestServer(t *testing.T, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}
