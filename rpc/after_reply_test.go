package rpc

import (
	"context"
	"encoding/json"
	"net"
	"testing"
)

// What AfterReply arranges runs once the answer is on the wire: a
// notification sent from it follows the answer, for a call answered on the
// read loop and for a staged one; a call without it sends nothing more.
func TestAfterReplyFollowsTheAnswer(t *testing.T) {
	server, client := net.Pipe()
	streams := make(chan *wireStream, 1)
	var ws *wireStream
	stream := func() *wireStream {
		if ws == nil {
			ws = <-streams
		}
		return ws
	}
	mux := NewMux(nil)
	notifyAfter := func(ctx context.Context, what string) {
		conn := ConnFromContext(ctx)
		if !AfterReply(stream(), ctx, func() { conn.Notify(context.Background(), "after", what) }) {
			t.Error("AfterReply refused a server stream")
		}
	}
	mux.Handle("now", func(ctx context.Context, _ json.RawMessage) (any, error) {
		notifyAfter(ctx, "now")
		return "answer-now", nil
	})
	mux.HandleStaged("staged", func(ctx context.Context, _ json.RawMessage) (func(context.Context) (any, error), error) {
		return func(ctx context.Context) (any, error) {
			notifyAfter(ctx, "staged")
			return "answer-staged", nil
		}, nil
	})
	mux.Handle("plain", func(context.Context, json.RawMessage) (any, error) { return "answer-plain", nil })
	got := serve(t, server, mux, 0)
	peer := newRawPeer(t, client, FramingNDJSON)
	peer.frame(`{"jsonrpc":"2.0","id":1,"method":"now"}`)
	streams <- got().stream

	for i, method := range []string{"now", "staged", "plain"} {
		if i > 0 {
			peer.frame(`{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"` + method + `"}`)
		}
		r := peer.recv()
		if r.Method != "" || string(r.Result) != `"answer-`+method+`"` {
			t.Fatalf("%s: first message %+v, want the answer", method, r)
		}
		if method == "plain" {
			break
		}
		if n := peer.recv(); n.Method != "after" || string(n.Params) != `"`+method+`"` {
			t.Fatalf("%s: after the answer came %+v, want the notification", method, n)
		}
	}
	// Nothing more was queued: the next message is the next answer.
	peer.frame(`{"jsonrpc":"2.0","id":9,"method":"plain"}`)
	if r := peer.recv(); string(r.ID) != "9" {
		t.Fatalf("got %+v, want the answer to 9", r)
	}
	if ws.afterN.Load() != 0 {
		t.Errorf("%d AfterReply functions left behind", ws.afterN.Load())
	}
}
