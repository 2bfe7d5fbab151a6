package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// An answer's done events repeat its text; the reader keeps it once, in
// the terminal event's output, at its size, and reads the frames in small
// pieces (a frame is never held whole).
func TestEventReaderKeepsTheAnswerOnce(t *testing.T) {
	text := strings.Repeat("word \"quoted\" é\n", 40000) // ~700 kB, escapes included
	item := fmt.Sprintf(`{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","text":%s,"annotations":[]}],"role":"assistant"}`, quote(text))
	frames := map[string]string{
		"response.output_text.done":  `{"type":"response.output_text.done","item_id":"msg_1","text":` + quote(text) + `}`,
		"response.content_part.done": `{"type":"response.content_part.done","part":{"type":"output_text","text":` + quote(text) + `}}`,
		"response.output_item.done":  `{"type":"response.output_item.done","output_index":0,"item":` + item + `}`,
		"response.completed": `{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","status":"completed","instructions":` +
			quote(text) + `,"output":[` + item + `],"usage":{"input_tokens":3,"output_tokens":5}}}`,
	}
	p := newEventReader(64 << 20)
	for typ, frame := range frames {
		e, err := p.read(iotest.HalfReader(strings.NewReader(frame)))
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if e.Type != typ || e.over != 0 {
			t.Fatalf("%s: read as %q, over %d", typ, e.Type, e.over)
		}
		if p.kept > int64(len(item))+64 {
			t.Errorf("%s: the event keeps %d bytes; the item is %d", typ, p.kept, len(item))
		}
		switch typ {
		case "response.output_item.done":
			if e.Item != nil {
				t.Errorf("a message item of %d bytes was kept from output_item.done", len(item))
			}
		case "response.completed":
			r := e.Response
			if r == nil || r.ID != "resp_1" || len(r.Output) != 1 || r.Usage == nil || r.Usage.OutputTokens != 5 {
				t.Fatalf("response %+v", r)
			}
			if !bytes.Equal(r.Output[0], []byte(item)) || cap(r.Output[0]) != len(item) {
				t.Errorf("output item: %d bytes (cap %d), want the item as sent, %d bytes, at its size",
					len(r.Output[0]), cap(r.Output[0]), len(item))
			}
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Frames that are not one JSON object are refused, as encoding/json
// refuses them; so is a reader that fails mid-frame, with its error.
func TestEventReaderRefuses(t *testing.T) {
	p := newEventReader(1 << 20)
	for _, frame := range []string{``, `[]`, `null`, `{"type":"x"} {}`, `{"type":"x",}`, `{"type":"a\x01"}`,
		`{"type":"x","n":01}`, `{"type":"x","s":"\q"}`, `{"type":"x","s":"\u12G4"}`, `{"type":5}`,
		`{"type":"x","sequence_number":1.5}`, `{"type":"x","a":tru}`, `{"type":"x"`, `{}`} {
		if e, err := p.read(strings.NewReader(frame)); err == nil {
			t.Errorf("%q read as %+v", frame, e)
		} else if !strings.HasPrefix(err.Error(), "server frame ") {
			t.Errorf("%q: error %q does not name the frame", frame, err)
		}
	}
	boom := errors.New("boom")
	_, err := p.read(io.MultiReader(strings.NewReader(`{"type":"response.output_text.delta","delta":"ab`), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("a failed read: %v", err)
	}
}

// A response whose output is over MaxMessage fails alone, with an error
// that says so: the connection, and another lane's response streaming on
// it, go on (the socket's read limit used to end the connection).
func TestEventOverLimitFailsOnlyItsResponse(t *testing.T) {
	srv := sim.New(sim.Options{Reasoning: sim.ReasoningNever})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// Without permessage-deflate the frames are as big as their text.
	c := NewClient(Config{BaseURL: base, Lanes: LanesOn, MaxMessage: 256 << 10, DisableCompression: true}.WithDefaults(), nil, nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	link, err := c.Link(ctx, "", "big")
	if err != nil {
		t.Fatal(err)
	}
	send := func(lane, prompt string) *Stream {
		t.Helper()
		if err := link.Acquire(ctx, lane); err != nil {
			t.Fatal(err)
		}
		msg, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": prompt})
		frame, err := Create{Type: "response.create", Settings: Settings{Model: "m"}, StreamID: lane, Input: []json.RawMessage{msg}}.Frame()
		if err != nil {
			t.Fatal(err)
		}
		st, err := link.Send(ctx, lane, frame)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	end := func(st *Stream) (*Result, error) {
		for first := true; ; first = false {
			e, err := st.Next(ctx, first, 20*time.Second, 20*time.Second)
			if err != nil {
				return nil, err
			}
			if e.Terminal() {
				return st.End(e)
			}
		}
	}
	big := send("big", "sim:tokens=60000 sim:chunk=100") // ~590 kB of text
	small := send("small", "sim:tokens=20000 sim:chunk=10")
	_, err = end(big)
	var tl *EventTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 256<<10 || tl.Size <= tl.Limit || !strings.Contains(err.Error(), "over hearth's limit") {
		t.Fatalf("the big response ended with %v, want an EventTooLargeError", err)
	}
	if v := Judge(err); v.Cause != CauseEventTooLarge || v.Action != Fail {
		t.Errorf("an event over the limit is %v, and %v: want a failure, not retried", v.Cause, v.Action)
	}
	if r, err := end(small); err != nil || len(r.Output) != 1 {
		t.Fatalf("the other lane's response: %+v, %v", r, err)
	}
	if !link.Alive() {
		t.Fatal("the connection died")
	}
	// The big lane is free again once its terminal event has passed: the
	// next request on it is answered on the same connection.
	if r, err := end(send("big", "sim:tokens=3")); err != nil || len(r.Output) != 1 {
		t.Fatalf("the big lane's next response: %+v, %v", r, err)
	}
	if n := srv.Handshakes(); n != 1 {
		t.Errorf("%d WebSocket handshakes, want the one connection throughout", n)
	}
}

// BenchmarkReadDelta is the parse of one text delta's frame by the
// connection's reader, and by encoding/json into the same Event.
func BenchmarkReadDelta(b *testing.B) {
	frame := []byte(`{"content_index":0,"delta":" tok1234","item_id":"msg_0123456789abcdef0123","logprobs":[],"output_index":1,"sequence_number":1240,"stream_id":"s-0123456789abcdef","type":"response.output_text.delta"}`)
	b.Run("eventReader", func(b *testing.B) {
		p := newEventReader(64 << 20)
		var r bytes.Reader
		for b.Loop() {
			r.Reset(frame)
			if _, err := p.read(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var e Event
			if err := json.Unmarshal(frame, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
