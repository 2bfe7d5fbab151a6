package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// pipeClient serves m on one end of a net.Pipe and returns a Client on the
// other.
func pipeClient(t testing.TB, m *Mux, opts ClientOptions) *Client {
	t.Helper()
	a, b := net.Pipe()
	serve(t, b, m, 0)
	c := NewClient(a, opts)
	t.Cleanup(func() { closeWithin(t, c.Close) })
	return c
}

func TestClientCallTimeout(t *testing.T) {
	c := pipeClient(t, newTestMux(t).Mux, ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, "block", nil, nil) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want deadline exceeded", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Call ignored its deadline")
	}
	// The connection is still usable.
	ctx2, cancel2 := context.WithTimeout(context.Background(), testTimeout)
	defer cancel2()
	var out map[string]int
	if err := c.Call(ctx2, "echo", map[string]int{"n": 3}, &out); err != nil || out["n"] != 3 {
		t.Fatalf("echo after timeout: %v %v", out, err)
	}
}

func TestClientCloseDoesNotHangWithPendingCall(t *testing.T) {
	a, b := net.Pipe()
	serve(t, b, newTestMux(t).Mux, 0)
	c := NewClient(a, ClientOptions{})
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(started)
		// No deadline: Close alone must end it.
		done <- c.Call(context.Background(), "block", nil, nil)
	}()
	<-started
	// Make sure the call is in flight: a later call on the same connection
	// is answered only after "block" was dispatched (it is async).
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Call(ctx, "echo", map[string]int{}, nil); err != nil {
		t.Fatal(err)
	}
	closeWithin(t, c.Close)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("pending call succeeded after Close")
		}
	case <-time.After(testTimeout):
		t.Fatal("pending call did not return after Close")
	}
	select {
	case <-c.Done():
	case <-time.After(testTimeout):
		t.Fatal("Done not closed after Close")
	}
	if err := c.Call(ctx, "echo", nil, nil); err == nil {
		t.Fatal("call after Close succeeded")
	}
	closeWithin(t, c.Close) // idempotent
}

func TestClientDoneWhenServerHangsUp(t *testing.T) {
	a, b := net.Pipe()
	c := NewClient(a, ClientOptions{})
	t.Cleanup(func() { closeWithin(t, c.Close) })
	_ = b.Close()
	select {
	case <-c.Done():
	case <-time.After(testTimeout):
		t.Fatal("Done not closed after the server hung up")
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err after hang-up = %v, want nil", err)
	}
}

func TestClientNotificationOrder(t *testing.T) {
	const n = 10_000
	var (
		mu   sync.Mutex
		seqs []int
		bad  error
	)
	all := make(chan struct{})
	c := pipeClient(t, newTestMux(t).Mux, ClientOptions{
		OnNotify: func(method string, params json.RawMessage) {
			var p struct{ Seq int }
			err := json.Unmarshal(params, &p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || method != MethodSessionUpdate {
				bad = errors.Join(bad, err, errors.New("unexpected method "+method))
			}
			seqs = append(seqs, p.Seq)
			if len(seqs) == n {
				close(all)
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var res struct{ Sent int }
	if err := c.Call(ctx, "stream", map[string]int{"count": n}, &res); err != nil || res.Sent != n {
		t.Fatalf("stream: %+v %v", res, err)
	}
	select {
	case <-all:
	case <-ctx.Done():
		t.Fatal("not all notifications delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	if bad != nil {
		t.Fatal(bad)
	}
	for i, s := range seqs {
		if s != i {
			t.Fatalf("notification %d has seq %d: reordered", i, s)
		}
	}
}

func TestClientWithoutOnCallAnswersMethodNotFound(t *testing.T) {
	m := newTestMux(t)
	m.HandleAsync("ask", func(ctx context.Context, params json.RawMessage) (any, error) {
		err := Call(ctx, ConnFromContext(ctx), MethodSessionRequestPermission, map[string]string{}, nil)
		var wire *jsonrpc2.Error
		if !errors.As(err, &wire) {
			return nil, err
		}
		return map[string]int{"code": int(wire.Code)}, nil
	})
	c := pipeClient(t, m.Mux, ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var res struct{ Code int }
	if err := c.Call(ctx, "ask", nil, &res); err != nil {
		t.Fatal(err)
	}
	if res.Code != int(jsonrpc2.MethodNotFound) {
		t.Fatalf("server saw code %d", res.Code)
	}
}

func TestClientOnCallPanicAnswered(t *testing.T) {
	m := newTestMux(t)
	m.HandleAsync("ask", func(ctx context.Context, params json.RawMessage) (any, error) {
		return nil, Call(ctx, ConnFromContext(ctx), MethodSessionRequestPermission, nil, nil)
	})
	c := pipeClient(t, m.Mux, ClientOptions{
		OnCall: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			panic("client bug")
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err := c.Call(ctx, "ask", nil, nil)
	var wire *jsonrpc2.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc2.InternalError {
		t.Fatalf("got %v, want an internal error relayed by the server", err)
	}
	if err := c.Call(ctx, "echo", map[string]int{}, nil); err != nil {
		t.Fatalf("client connection died: %v", err)
	}
}

func TestDialUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "hearth.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	m := newTestMux(t)
	m.Handle(MethodHearthStatus, func(ctx context.Context, params json.RawMessage) (any, error) {
		return Status{Version: "test", PID: 42, APIKey: MaskSecret("sk-abcdefghijklmnop"), Workspaces: []WorkspaceStatus{{Root: "/w", State: WorkspaceReady}}}, nil
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			serve(t, conn, m.Mux, 0)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeWithin(t, c.Close) })
	var st Status
	if err := c.Call(ctx, MethodHearthStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.Version != "test" || st.PID != 42 || st.APIKey != "sk-...mnop" || len(st.Workspaces) != 1 || st.Workspaces[0].State != "ready" {
		t.Fatalf("status %+v", st)
	}
	err = c.Call(ctx, "nope", nil, nil)
	if wire, ok := err.(*jsonrpc2.Error); !ok || wire.Code != jsonrpc2.MethodNotFound {
		t.Fatalf("unknown method: %v", err)
	}

	if _, err := Dial(ctx, filepath.Join(t.TempDir(), "absent.sock")); err == nil {
		t.Fatal("dialing a missing socket succeeded")
	}
}
