package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
)

// sseFuzzWait bounds every wait of one FuzzSSEStream case: a stream that
// neither ends nor fails within it hangs.
const sseFuzzWait = 10 * time.Second

// FuzzSSEStream serves arbitrary bytes as the 200 text/event-stream body of
// one HTTP request and reads it through an httpLink, as after a fallback.
// It checks that the stream always ends, within a deadline, with exactly
// one of a terminal event or an error wrapping ErrConnectionLost; that the
// events delivered are, in order and byte for byte, the data blocks of the
// body that parse, up to the first terminal one or the first that does not
// parse (sseBlocks); and that the per-event byte cap (fuzzed too) only ever
// cuts the stream short with an error, and never bites a body no longer
// than the cap.
//
//	go test ./session -run '^$' -fuzz FuzzSSEStream -fuzztime 1m
//
// Seeds: below, and testdata/fuzz/FuzzSSEStream.
func FuzzSSEStream(f *testing.F) {
	// The body to serve travels in the request itself, so cases share one
	// server and nothing else.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			FuzzBody []byte `json:"fuzz_body"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(req.FuzzBody)
	}))
	f.Cleanup(srv.Close)

	f.Add([]byte("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0}\n\n"+
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[]}}\n\n"), uint16(4096))
	f.Add([]byte("data: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\"}\r\n\r\n"), uint16(4096))
	f.Add([]byte("data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\ndata: {\"type\":"), uint16(4096))
	f.Add([]byte("data: {\"type\":\"response.created\"}\n\n"), uint16(0))
	f.Fuzz(func(t *testing.T, body []byte, capArg uint16) {
		maxMessage := 64 + int64(capArg)
		wantEvents, wantTerminal := sseBlocks(body)

		link := newHTTPLink(func() Config { return Config{BaseURL: srv.URL, MaxMessage: maxMessage} })
		defer closeWithin(t, link)
		frame, err := json.Marshal(map[string]any{"type": "response.create", "model": "fuzz", "fuzz_body": body})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), sseFuzzWait)
		defer cancel()
		st, err := link.Send(ctx, "", frame)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		var (
			got      []*Event
			terminal bool
			endErr   error
		)
		for {
			e, err := st.Next(ctx, len(got) == 0, sseFuzzWait, sseFuzzWait)
			if err != nil {
				endErr = err
				break
			}
			got = append(got, e)
			if isTerminal(e.Type) {
				terminal = true
				break
			}
		}
		switch {
		case terminal:
			st.mu.Lock()
			ended, queued, serr := st.ended, len(st.q), st.err
			st.mu.Unlock()
			if !ended || queued != 0 || serr != nil {
				t.Fatalf("after the terminal event: ended %v, %d events queued, error %v", ended, queued, serr)
			}
		case !errors.Is(endErr, ErrConnectionLost) && !errors.As(endErr, new(*EventTooLargeError)):
			t.Fatalf("stream of %q ended with %v, want a terminal event, ErrConnectionLost or an event over the cap", body, endErr)
		}

		// The cap cuts short, never adds or alters.
		if len(got) > len(wantEvents) {
			t.Fatalf("%d events delivered, the body has %d that parse: %q", len(got), len(wantEvents), body)
		}
		for i := range got {
			want, _ := parseEvent(wantEvents[i], maxMessage)
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("event %d is %+v, want the data block %q's", i, got[i], wantEvents[i])
			}
		}
		short := len(got) < len(wantEvents) || terminal != wantTerminal
		if short && int64(len(body)) <= maxMessage {
			t.Fatalf("body of %d bytes, cap %d: got %d events (terminal %v, %v), want %d (terminal %v): %q",
				len(body), maxMessage, len(got), terminal, endErr, len(wantEvents), wantTerminal, body)
		}
		if short && (terminal || !errors.As(endErr, new(*EventTooLargeError))) {
			t.Fatalf("stream cut short by %v, not by the cap: got %d events, want %d", endErr, len(got), len(wantEvents))
		}
	})
}

// sseBlocks is what an uncapped SSE reader makes of body: the data of each
// event (its "data:" lines after one optional space, joined by newlines),
// dispatched at a blank line, up to the first terminal event or the first
// event that does not parse; and whether that is a terminal event. Lines end
// at "\n", with any "\r" before it dropped; the end of the body ends the
// last line, so a body that ends right after a newline, or in "\r",
// dispatches a pending event as a blank line would (the SSE spec discards
// it), while one that ends in a data line only adds to an event never
// dispatched.
func sseBlocks(body []byte) (events [][]byte, terminal bool) {
	segs := bytes.SplitAfter(body, []byte("\n"))
	var data []byte
	for _, seg := range segs {
		line := bytes.TrimRight(seg, "\r\n")
		if after, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(after, []byte(" "))...)
		} else if len(line) == 0 && len(data) > 0 {
			e, err := parseEvent(data, 1<<30)
			if err != nil {
				return events, false
			}
			events = append(events, data)
			if isTerminal(e.Type) {
				return events, true
			}
			data = nil
		}
	}
	return events, false
}

// closeWithin closes link, failing the test if its reader does not end.
func closeWithin(t *testing.T, link *httpLink) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		link.close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(sseFuzzWait):
		t.Fatal("the link's reader did not end after close")
	}
}
