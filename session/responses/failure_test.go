package responses

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Every failure a model request can meet, its kind, and what it leads to:
// the stream's fate and the retry. One table, so that a new failure gets a
// row and a decision instead of a branch somewhere; every kind has a row.
func TestJudgeTable(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		kind   Kind
		stream StreamAction
		retry  bool
		once   string
	}{
		{"cancelled by the user", context.Canceled, KindCancelled, WalkAway, false, ""},
		{"turn deadline", context.DeadlineExceeded, KindCancelled, WalkAway, false, ""},
		{"silence", fmt.Errorf("no event for 5m: %w", ErrSilence), KindTransient, WalkAway, true, ""},
		{"connection lost", fmt.Errorf("%w: EOF", ErrConnectionLost), KindTransient, Leave, true, ""},
		{"sibling aborted on the socket", errAborted, KindTransient, Leave, true, ""},
		{"connection rotated under the request", errRotated, KindTransient, Leave, true, ""},
		{"no lanes, switched", &NoLanesError{Why: "ignores", Switched: true}, KindTransient, Leave, true, OnceLanes},
		{"no lanes, HEARTH_LANES=on", &NoLanesError{Why: "ignores"}, KindModelAPI, Leave, false, ""},
		{"cache miss", &APIError{Status: 400, Code: "previous_response_not_found"}, KindTransient, Leave, true, OnceCache},
		{"connection limit", &APIError{Status: 400, Code: "websocket_connection_limit_reached"}, KindTransient, DropConn, true, ""},
		{"rate limit", &APIError{Status: 429, Code: "rate_limit_exceeded", Message: "try again in 20ms"}, KindTransient, Leave, true, ""},
		{"server error event", &APIError{Status: 500, Code: "server_error"}, KindTransient, Leave, true, ""},
		{"server error type", &APIError{Type: "server_error"}, KindTransient, Leave, true, ""},
		{"response failed on the server", &ResponseError{Status: "failed", Code: "server_error"}, KindTransient, Leave, true, ""},
		{"response rate limited", &ResponseError{Status: "failed", Code: "rate_limit_exceeded"}, KindTransient, Leave, true, ""},
		{"response failed otherwise", &ResponseError{Status: "failed", Code: "invalid_prompt"}, KindModelAPI, Leave, false, ""},
		{"invalid api key", &APIError{Status: 401, Code: "invalid_api_key"}, KindAuth, Leave, false, ""},
		{"handshake 401", &HandshakeError{StatusCode: 401}, KindAuth, Leave, false, ""},
		{"handshake 403", &HandshakeError{StatusCode: 403}, KindModelAPI, Leave, false, ""},
		{"quota (a 429 that is not a rate limit)", &APIError{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota"}, KindQuota, Leave, false, ""},
		{"context length", &APIError{Status: 400, Code: "context_length_exceeded"}, KindContextLength, Leave, false, ""},
		{"context length, with advice", fmt.Errorf("%w: %w", ErrContextLength, &APIError{Status: 400, Code: "context_length_exceeded"}), KindContextLength, Leave, false, ""},
		{"unknown model", &APIError{Status: 404, Code: "model_not_found"}, KindModelNotFound, Leave, false, ""},
		{"bad request", &APIError{Status: 400, Code: "invalid_value"}, KindModelAPI, Leave, false, ""},
		{"item not found (store:false id)", &APIError{Status: 404, Message: "Item with id 'rs_1' not found."}, KindModelAPI, Leave, false, ""},
		{"an event over the limit", &EventTooLargeError{Type: "response.completed", Size: 70 << 20, Limit: 64 << 20}, KindModelAPI, Leave, false, ""},
		{"the store failed", WithKind(KindStore, fmt.Errorf("commit the response: disk full")), KindStore, Leave, false, ""},
		{"client closed", ErrClosed, KindInternal, Leave, false, ""},
		{"anything else", fmt.Errorf("no tool named x"), KindInternal, Leave, false, ""},
	}
	covered := make([]bool, NumKinds)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if k := Classify(tc.err); k != tc.kind {
				t.Errorf("Classify(%v) = %v, want %v", tc.err, k, tc.kind)
			}
			v := Judge(tc.err, 0, time.Minute)
			if v.Stream != tc.stream || v.Retry != tc.retry || v.Once != tc.once {
				t.Errorf("Judge(%v) = %+v; want stream %d retry %v once %q", tc.err, v, tc.stream, tc.retry, tc.once)
			}
			if v.Retry && v.Why == "" {
				t.Errorf("a retry with no reason to tell the user")
			}
		})
		covered[tc.kind] = true
	}
	for k := range Kind(NumKinds) {
		if !covered[k] {
			t.Errorf("no case of kind %v: add one", k)
		}
		if k.String() == "" || strings.HasPrefix(k.String(), "Kind(") {
			t.Errorf("kind %d has no name", k)
		}
	}
}

// What a failed WebSocket handshake leads to.
func TestDialRule(t *testing.T) {
	cfg := Config{}.WithDefaults() // 5 attempts within 20 s
	lost := fmt.Errorf("dial ws://h/v1/responses: connection refused")
	cases := []struct {
		name    string
		err     error
		ctxDone bool
		attempt int
		elapsed time.Duration
		want    dialAction
	}{
		{"refused, first attempt", lost, false, 0, 0, dialRetry},
		{"refused, upgrade 503", &HandshakeError{StatusCode: 503}, false, 1, time.Second, dialRetry},
		{"refused, last attempt", lost, false, cfg.DialAttempts - 1, time.Second, dialFallBack},
		{"refused, past the budget", lost, false, 1, cfg.DialBudget + time.Second, dialFallBack},
		{"no WebSocket (426)", &HandshakeError{StatusCode: 426}, false, 0, 0, dialHTTPForGood},
		{"key refused (401)", &HandshakeError{StatusCode: 401}, false, 0, 0, dialFail},
		{"forbidden (403)", &HandshakeError{StatusCode: 403}, false, 0, 0, dialFail},
		{"no such endpoint (404)", &HandshakeError{StatusCode: 404}, false, 0, 0, dialFail},
		{"the caller gave up", context.Canceled, true, 0, 0, dialFail},
		{"the client closed", ErrClosed, false, 0, 0, dialFail},
	}
	for _, tc := range cases {
		if got := dialRule(tc.err, tc.ctxDone, tc.attempt, tc.elapsed, cfg); got != tc.want {
			t.Errorf("%s: dialRule = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Once on HTTP after a failed upgrade, the WebSocket is probed again soon,
// then less often while it keeps failing, and the count starts over when
// it opens.
func TestProbeAfterBacksOff(t *testing.T) {
	c := NewClient(Config{}, nil, nil)
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
