package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// partialConn is a connection whose TryWrite takes at most take bytes at
// once; Write takes everything. It records what was written, in order.
type partialConn struct {
	mu   sync.Mutex
	out  bytes.Buffer
	take int
}

func (c *partialConn) Read([]byte) (int, error) { select {} }
func (c *partialConn) Close() error             { return nil }
func (c *partialConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *partialConn) TryWrite(p []byte) (int, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(p), c.take)
	c.out.Write(p[:n])
	return n, true, nil
}

// A frame TryWrite begins and the connection takes only in part is
// finished before anything else goes out: by the next Write, or by Finish;
// while it is pending, TryWrite writes nothing. Every frame arrives whole,
// in order.
func TestTryWriteFinishesFramesInOrder(t *testing.T) {
	c := &partialConn{take: 10}
	st := NewClientStream(c)
	note := func(i int) jsonrpc2.Message {
		return jsonrpc2.NewNotification("n", jsonrpc2.RawMessage(`{"i":`+string(rune('0'+i))+`}`))
	}
	written, pending, err := TryWrite(st, note(1))
	if err != nil || !written || !pending {
		t.Fatalf("first TryWrite: written %v pending %v err %v, want a frame begun", written, pending, err)
	}
	if written, _, _ := TryWrite(st, note(2)); written {
		t.Fatal("TryWrite wrote while a frame was unfinished")
	}
	if _, err := st.Write(context.Background(), note(3)); err != nil {
		t.Fatal(err)
	}
	c.take = 1 << 20
	if written, pending, err := TryWrite(st, note(4)); !written || pending || err != nil {
		t.Fatalf("TryWrite of a frame the connection takes whole: %v %v %v", written, pending, err)
	}
	c.take = 3
	if written, pending, _ := TryWrite(st, note(5)); !written || !pending {
		t.Fatal("the last frame was not begun")
	}
	if err := Finish(st); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(c.out.String(), "\n"), "\n")
	want := []string{"1", "3", "4", "5"}
	if len(lines) != len(want) {
		t.Fatalf("frames %q, want %d", lines, len(want))
	}
	for i, l := range lines {
		var m struct {
			Method string
			Params struct{ I int }
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Method != "n" || string(rune('0'+m.Params.I)) != want[i] {
			t.Fatalf("frame %d is %q (%v), want notification %s", i, l, err, want[i])
		}
	}
}
