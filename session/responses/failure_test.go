package responses

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Every failure a model request can meet, its cause, and what it leads
// to: the next action, the stream's fate, whether only once. One table, so
// that a new failure gets a row and a decision instead of a branch
// somewhere; every cause has a case.
func TestJudgeTable(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		cause  Cause
		action Action
		stream StreamAction
		once   bool
	}{
		{"cancelled by the user", context.Canceled, CauseCancelled, Fail, WalkAway, false},
		{"turn deadline", context.DeadlineExceeded, CauseCancelled, Fail, WalkAway, false},
		{"silence", fmt.Errorf("no event for 5m: %w", ErrSilence), CauseSilence, Retry, WalkAway, false},
		{"connection lost", fmt.Errorf("%w: EOF", ErrConnectionLost), CauseConnectionLost, Retry, Leave, false},
		{"sibling aborted on the socket", errAborted, CauseConnectionLost, Retry, Leave, false},
		{"connection rotated under the request", errRotated, CauseConnectionLost, Retry, Leave, false},
		{"API unreachable", &unreachableError{base: "http://h/v1", cause: "connection refused"}, CauseConnectionLost, Retry, Leave, false},
		{"no lanes, switched", &NoLanesError{Why: "ignores", Switched: true}, CauseLanesSwitched, Rewarm, Leave, true},
		{"no lanes, HEARTH_LANES=on", &NoLanesError{Why: "ignores"}, CauseNoLanes, Fail, Leave, false},
		{"cache miss", &APIError{Status: 400, Code: "previous_response_not_found"}, CausePreviousNotFound, Resend, Leave, true},
		{"connection limit", &APIError{Status: 400, Code: "websocket_connection_limit_reached"}, CauseConnectionLimit, Retry, DropConn, false},
		{"rate limit", &APIError{Status: 429, Code: "rate_limit_exceeded", Message: "try again in 20ms"}, CauseRateLimit, Retry, Leave, false},
		{"server error event", &APIError{Status: 500, Code: "server_error"}, CauseServerError, Retry, Leave, false},
		{"server error type", &APIError{Type: "server_error"}, CauseServerError, Retry, Leave, false},
		{"response failed on the server", &ResponseError{Status: "failed", Code: "server_error"}, CauseResponseFailed, Retry, Leave, false},
		{"response rate limited", &ResponseError{Status: "failed", Code: "rate_limit_exceeded"}, CauseResponseFailed, Retry, Leave, false},
		{"response failed otherwise", &ResponseError{Status: "failed", Code: "invalid_prompt"}, CauseResponseRefused, Fail, Leave, false},
		{"invalid api key", &APIError{Status: 401, Code: "invalid_api_key"}, CauseAuth, Fail, Leave, false},
		{"handshake 401", &HandshakeError{StatusCode: 401}, CauseAuth, Fail, Leave, false},
		{"handshake 403", &HandshakeError{StatusCode: 403}, CauseUpgradeRefused, Fail, Leave, false},
		{"handshake 426", &HandshakeError{StatusCode: 426}, CauseNoWebSocket, FallBackHTTP, Leave, false},
		{"handshake 503", &HandshakeError{StatusCode: 503}, CauseUpgradeFailed, Retry, Leave, false},
		{"quota (a 429 that is not a rate limit)", &APIError{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota"}, CauseQuota, Fail, Leave, false},
		{"context length", &APIError{Status: 400, Code: "context_length_exceeded"}, CauseContextLength, Compact, Leave, true},
		{"context length, with advice", fmt.Errorf("%w: %w", ErrContextLength, &APIError{Status: 400, Code: "context_length_exceeded"}), CauseContextLength, Compact, Leave, true},
		{"unknown model", &APIError{Status: 404, Code: "model_not_found"}, CauseModelNotFound, Fail, Leave, false},
		{"bad request", &APIError{Status: 400, Code: "invalid_value"}, CauseRefused, Fail, Leave, false},
		{"item not found (store:false id)", &APIError{Status: 404, Message: "Item with id 'rs_1' not found."}, CauseRefused, Fail, Leave, false},
		{"an event over the limit", &EventTooLargeError{Type: "response.completed", Size: 70 << 20, Limit: 64 << 20}, CauseEventTooLarge, Fail, Leave, false},
		{"the store failed", WithCause(CauseStore, fmt.Errorf("commit the response: disk full")), CauseStore, Fail, Leave, false},
		{"client closed", ErrClosed, CauseInternal, Fail, Leave, false},
		{"anything else", fmt.Errorf("no tool named x"), CauseInternal, Fail, Leave, false},
	}
	covered := make([]bool, NumCauses)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.err)
			if v.Cause != tc.cause || CauseOf(tc.err) != tc.cause {
				t.Errorf("Judge(%v) is of cause %v, want %v", tc.err, v.Cause, tc.cause)
			}
			if v.Action != tc.action || v.Stream != tc.stream || v.Once != tc.once {
				t.Errorf("Judge(%v) = %v, stream %d, once %v; want %v, stream %d, once %v", tc.err, v.Action, v.Stream, v.Once, tc.action, tc.stream, tc.once)
			}
		})
		covered[tc.cause] = true
	}
	for c := range Cause(NumCauses) {
		if !covered[c] {
			t.Errorf("no case of cause %v: add one", c)
		}
	}
}

// Every cause has a row in the failure table: a name, what the user is
// told, and an action; the refusals a user must act on carry their advice.
// A cause without a row would be a quiet "fail, say nothing".
func TestFailureTable(t *testing.T) {
	names := map[string]Cause{}
	for c := range Cause(NumCauses) {
		f := failures[c]
		if f.name == "" || f.why == "" || strings.HasPrefix(c.String(), "Cause(") {
			t.Errorf("cause %d has no row in failures (name %q, why %q)", c, f.name, f.why)
		}
		if other, ok := names[f.name]; ok {
			t.Errorf("causes %d and %d share the name %q", other, c, f.name)
		}
		names[f.name] = c
		if f.advice != nil && f.action != Fail && f.action != Compact {
			t.Errorf("cause %v gives advice but is %v: advice is for a failure the user must fix", c, f.action)
		}
		if f.sized && f.advice == nil {
			t.Errorf("cause %v quotes the size without advice", c)
		}
		if f.action.String() == "" || strings.HasPrefix(f.action.String(), "Action(") {
			t.Errorf("cause %v: action %d has no name", c, f.action)
		}
	}
	for _, c := range []Cause{CauseAuth, CauseQuota, CauseContextLength, CauseModelNotFound} {
		if failures[c].advice == nil {
			t.Errorf("the refusal %v says nothing of what to do", c)
		}
	}
}

// The waits: a lost connection retries at once first, a rate limit after
// the server's hint, never longer than the longest wait.
func TestJudgeWaits(t *testing.T) {
	lost := Judge(ErrConnectionLost)
	if w := lost.Wait(0, time.Minute); w != 0 {
		t.Errorf("the first retry after a loss waits %s", w)
	}
	if w := lost.Wait(1, time.Minute); w <= 0 || w > 2*time.Second {
		t.Errorf("the second retry after a loss waits %s", w)
	}
	limited := Judge(&APIError{Status: 429, Code: "rate_limit_exceeded", Message: "try again in 20ms"})
	if w := limited.Wait(0, time.Minute); w != 20*time.Millisecond {
		t.Errorf("a rate limit hinting 20ms waits %s", w)
	}
	if w := Judge(&APIError{Status: 429, Message: "try again in 90s"}).Wait(0, time.Second); w != time.Second {
		t.Errorf("a hint past the longest wait waits %s", w)
	}
	if w := Judge(&APIError{Status: 500}).Wait(3, time.Second); w <= 0 || w > time.Second {
		t.Errorf("a server error's fourth retry waits %s", w)
	}
	if w := Judge(&APIError{Status: 400, Code: "previous_response_not_found"}).Wait(0, time.Minute); w != 0 {
		t.Errorf("a cache miss waits %s before the full resend", w)
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
