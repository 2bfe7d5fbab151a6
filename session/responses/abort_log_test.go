package responses

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"log/slog"

	"github.com/hearthd/hearth/session/sim"
)

// lines is a slog.Handler that hands each record, as text, to a channel.
type lines chan string

func (l lines) Enabled(context.Context, slog.Level) bool { return true }
func (l lines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l lines) WithGroup(string) slog.Handler            { return l }
func (l lines) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	l <- b.String()
	return nil
}

// A connection hearth closes to abandon a response (a cancel: the WebSocket
// has no cancel event) is logged as that, not as a lost connection.
func TestAbortIsNotLoggedAsLost(t *testing.T) {
	srv := sim.New(sim.Options{Reasoning: sim.ReasoningNever})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	logs := make(lines, 64)
	c := NewClient(Config{BaseURL: base, Lanes: LanesOn}.WithDefaults(), slog.New(logs), nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	link, err := c.Link(ctx, "", "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := link.Acquire(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": "sim:tokens=20000 sim:chunk=10"})
	frame, err := Create{Type: "response.create", Settings: Settings{Model: "m"}, StreamID: "s", Input: []json.RawMessage{msg}}.Frame()
	if err != nil {
		t.Fatal(err)
	}
	st, err := link.Send(ctx, "s", frame)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(ctx, true, 20*time.Second, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	link.Abort(st, false)
	for {
		select {
		case <-ctx.Done():
			t.Fatal("no log of the connection's end")
		case line := <-logs:
			if !strings.HasPrefix(line, "connection") {
				continue
			}
			if strings.Contains(line, "lost") || !strings.Contains(line, "abandon") {
				t.Errorf("the abort's log: %s", line)
			}
			return
		}
	}
}
