package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Every failure a model request can meet, and what it leads to: the
// stream's fate and the retry. One table, so that a new failure gets a row
// and a decision instead of a branch somewhere.
func TestJudgeTable(t *testing.T) {
	cfg := Config{}.WithDefaults()
	cases := []struct {
		name   string
		err    error
		stream streamAction
		retry  bool
		once   string
	}{
		{"cancelled by the user", context.Canceled, walkAway, false, ""},
		{"turn deadline", context.DeadlineExceeded, walkAway, false, ""},
		{"silence", fmt.Errorf("no event for 5m: %w", ErrSilence), walkAway, true, ""},
		{"connection lost", fmt.Errorf("%w: EOF", ErrConnectionLost), leave, true, ""},
		{"sibling aborted on the socket", errAborted, leave, true, ""},
		{"connection rotated under the request", errRotated, leave, true, ""},
		{"no lanes, switched", &NoLanesError{Why: "ignores", Switched: true}, leave, true, "lanes"},
		{"no lanes, HEARTH_LANES=on", &NoLanesError{Why: "ignores"}, leave, false, "lanes"},
		{"cache miss", &APIError{Status: 400, Code: "previous_response_not_found"}, leave, true, "cache"},
		{"connection limit", &APIError{Status: 400, Code: "websocket_connection_limit_reached"}, dropConn, true, ""},
		{"rate limit", &APIError{Status: 429, Code: "rate_limit_exceeded", Message: "try again in 20ms"}, leave, true, ""},
		{"server error event", &APIError{Status: 500, Code: "server_error"}, leave, true, ""},
		{"server error type", &APIError{Type: "server_error"}, leave, true, ""},
		{"response failed on the server", &ResponseError{Status: "failed", Code: "server_error"}, leave, true, ""},
		{"response failed otherwise", &ResponseError{Status: "failed", Code: "invalid_prompt"}, leave, false, ""},
		{"invalid api key", &APIError{Status: 401, Code: "invalid_api_key"}, leave, false, ""},
		{"handshake 401", &HandshakeError{StatusCode: 401}, leave, false, ""},
		{"quota (a 429 that is not a rate limit)", &APIError{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota"}, leave, false, ""},
		{"context length", &APIError{Status: 400, Code: "context_length_exceeded"}, leave, false, ""},
		{"unknown model", &APIError{Status: 404, Code: "model_not_found"}, leave, false, ""},
		{"bad request", &APIError{Status: 400, Code: "invalid_value"}, leave, false, ""},
		{"item not found (store:false id)", &APIError{Status: 404, Message: "Item with id 'rs_1' not found."}, leave, false, ""},
		{"anything else", fmt.Errorf("commit the response: disk full"), leave, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.err, 0, cfg)
			if v.stream != tc.stream || v.retry != tc.retry || v.once != tc.once {
				t.Errorf("judge(%v) = %+v; want stream %d retry %v once %q", tc.err, v, tc.stream, tc.retry, tc.once)
			}
			if v.retry && v.why == "" {
				t.Errorf("a retry with no reason to tell the user")
			}
		})
	}
}

// Once on HTTP after a failed upgrade, the WebSocket is probed again soon,
// then less often while it keeps failing, and the count starts over when
// it opens.
func TestProbeAfterBacksOff(t *testing.T) {
	c := NewClient(Config{}, nil)
	defer c.Close()
	var got []time.Duration
	for range 6 {
		got = append(got, c.probeAfter()) // as link computes it, before the fallback counts
		c.fallBack(time.Now(), "test")
		c.mu.Lock()
		c.useHTTP = false
		c.mu.Unlock()
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("probe intervals %v, want %v", got, want)
		}
	}
	c.mu.Lock()
	c.fallbacks = 0 // as a successful dial does
	c.mu.Unlock()
	if d := c.probeAfter(); d != 30*time.Second {
		t.Errorf("after the WebSocket opened again: %s, want 30s", d)
	}
}

// Credentials in the base URL never reach an error the editor or status
// shows.
func TestSafeURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pass@host:8080/v1": "http://***@host:8080/v1",
		"https://api.openai.com/v1":     "https://api.openai.com/v1",
		"ws://tok@h/v1/responses":       "ws://***@h/v1/responses",
		"http://us%zz:p@ss@h/":          "http://***@h/",
	} {
		if got := safeURL(in); got != want {
			t.Errorf("safeURL(%q) = %q, want %q", in, got, want)
		}
	}
	cfg := Config{BaseURL: "ftp://user:secret@host/v1"}
	if _, err := cfg.websocketURL(); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("websocketURL error %v", err)
	}
}
