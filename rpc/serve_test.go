package rpc

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"
)

// A peer that hangs up mid-prompt must cancel the prompt's context, or the
// handler runs on and the connection's Close waits for it.
func TestServeConnCancelsHandlersOnHangUp(t *testing.T) {
	m := NewMux(nil)
	started := make(chan struct{})
	stopped := make(chan error, 1)
	m.HandleAsync(MethodSessionPrompt, func(ctx context.Context, params json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	})
	client, server := net.Pipe()
	served := make(chan error, 1)
	var conn interface{ Close() error }
	go func() {
		c, _, err := ServeConn(context.Background(), server, m.Handler(), 0)
		conn = c
		served <- err
	}()
	p := newRawPeer(t, client, FramingNDJSON)
	p.frame(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`)
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeConn did not return")
	}
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("prompt never started")
	}
	_ = client.Close()
	select {
	case err := <-stopped:
		if err == nil {
			t.Fatal("handler context not cancelled")
		}
	case <-time.After(testTimeout):
		t.Fatal("handler still running after the peer hung up")
	}
	closeWithin(t, conn.Close)
}
