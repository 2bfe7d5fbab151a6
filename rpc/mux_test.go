package rpc

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

func TestMuxErrorsKeepConnectionServing(t *testing.T) {
	cases := []struct {
		name string
		body string
		code jsonrpc2.Code
		msg  []string
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":%d,"method":"nope/nothing"}`, jsonrpc2.MethodNotFound, []string{"nope/nothing"}},
		{"cwd of the wrong type", `{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}`, jsonrpc2.InvalidParams, []string{"cwd", "string"}},
		{"required field missing", `{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"mcpServers":[]}}`, jsonrpc2.InvalidParams, []string{"cwd", "required"}},
		{"params missing", `{"jsonrpc":"2.0","id":%d,"method":"session/new"}`, jsonrpc2.InvalidParams, []string{"params"}},
		{"handler panic", `{"jsonrpc":"2.0","id":%d,"method":"panic"}`, jsonrpc2.InternalError, []string{"panicked", "can't happen"}},
		{"application error", `{"jsonrpc":"2.0","id":%d,"method":"unknownSession"}`, CodeResourceNotFound, []string{`"s-42"`}},
	}
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			id := 10 + i
			p.frame(strings.Replace(tc.body, "%d", itoa(id), 1))
			r := p.expectError(tc.code, itoa(id))
			for _, m := range tc.msg {
				if !strings.Contains(r.Error.Message, m) {
					t.Errorf("message %q does not mention %q", r.Error.Message, m)
				}
			}
			p.expectEcho(100 + i)
		})
	}
}

func TestMuxSessionNewSucceeds(t *testing.T) {
	client, server := net.Pipe()
	serve(t, server, newTestMux(t).Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	p.frame(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	r := p.recv()
	if r.Error != nil || string(r.Result) != `{"sessionId":"s-1"}` {
		t.Fatalf("got error %+v result %s", r.Error, r.Result)
	}
}

func TestMuxNotificationsNeverKillConnection(t *testing.T) {
	client, server := net.Pipe()
	m := newTestMux(t)
	serve(t, server, m.Mux, 0)
	p := newRawPeer(t, client, FramingNDJSON)
	p.frame(`{"jsonrpc":"2.0","method":"note/panic","params":{}}`)
	p.frame(`{"jsonrpc":"2.0","method":"no/such/notification"}`)
	p.frame(`{"jsonrpc":"2.0","method":"echo"}`) // a call method sent as a notification
	p.frame(`{"jsonrpc":"2.0","method":"note/record"}`)
	select {
	case got := <-m.notes:
		if got != "note/record" {
			t.Fatalf("handled %q", got)
		}
	case <-time.After(testTimeout):
		t.Fatal("note/record never handled")
	}
	// None of the notifications got a reply: the next frame is the echo's.
	p.expectEcho(1)

	// A notification method called with an id runs and is answered with null.
	p.frame(`{"jsonrpc":"2.0","id":2,"method":"note/record"}`)
	if r := p.recv(); r.Error != nil || string(r.Result) != "null" || string(r.ID) != "2" {
		t.Fatalf("got %+v", r)
	}
	<-m.notes
}

func TestMuxMethodsSorted(t *testing.T) {
	got := newTestMux(t).Methods()
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("not sorted: %v", got)
		}
	}
	if len(got) != 9 {
		t.Fatalf("methods %v", got)
	}
}

func TestMuxAsyncServerCallNoDeadlock(t *testing.T) {
	m := newTestMux(t)
	cancelled := make(chan struct{})
	m.HandleAsync(MethodSessionPrompt, func(ctx context.Context, params json.RawMessage) (any, error) {
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if err := DecodeParams(params, &p); err != nil {
			return nil, err
		}
		var answer struct {
			Outcome struct {
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		}
		err := Call(ctx, ConnFromContext(ctx), MethodSessionRequestPermission,
			map[string]any{"sessionId": p.SessionID, "options": []string{"allow", "deny"}}, &answer)
		if err != nil {
			return nil, err
		}
		if answer.Outcome.OptionID == "deny" {
			// Wait for session/cancel, which the read loop must still deliver.
			select {
			case <-cancelled:
				return nil, ErrCancelled
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return map[string]string{"stopReason": "end_turn", "sessionId": p.SessionID}, nil
	})
	m.Notification(MethodSessionCancel, func(ctx context.Context, params json.RawMessage) {
		close(cancelled)
	})

	client, server := net.Pipe()
	serve(t, server, m.Mux, 0)
	c := NewClient(client, ClientOptions{
		OnCall: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != MethodSessionRequestPermission {
				return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "no %s", method)
			}
			var p struct {
				SessionID string `json:"sessionId"`
			}
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			option := "allow"
			if p.SessionID == "s-deny" {
				option = "deny"
			}
			return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": option}}, nil
		},
	})
	t.Cleanup(func() { closeWithin(t, c.Close) })

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var res struct {
		StopReason string `json:"stopReason"`
		SessionID  string `json:"sessionId"`
	}
	if err := c.Call(ctx, MethodSessionPrompt, map[string]string{"sessionId": "s-1"}, &res); err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if res.StopReason != "end_turn" || res.SessionID != "s-1" {
		t.Fatalf("result %+v", res)
	}

	// A prompt that waits for session/cancel: the cancel must get through
	// while the prompt is still running.
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, MethodSessionPrompt, map[string]string{"sessionId": "s-deny"}, nil) }()
	// Prove the connection serves while the prompt runs, then cancel.
	if err := c.Call(ctx, "echo", map[string]int{"n": 1}, nil); err != nil {
		t.Fatalf("echo during prompt: %v", err)
	}
	if err := c.Notify(ctx, MethodSessionCancel, map[string]string{"sessionId": "s-deny"}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	select {
	case err := <-errc:
		wire, ok := err.(*jsonrpc2.Error)
		if !ok || wire.Code != CodeRequestCancelled {
			t.Fatalf("cancelled prompt returned %v, want code %d", err, CodeRequestCancelled)
		}
	case <-ctx.Done():
		t.Fatal("prompt never finished")
	}
}
