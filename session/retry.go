package session

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// request sends one model request of a turn and retries what is safe to
// retry. Nothing of a failed response was applied — output items are
// committed and tools run only after response.completed — so a retry can
// never run a tool twice or write an item twice. A retry after a lost
// connection or a silence goes out in full on a new connection: the old
// connection (and whatever the server still does on it) is dropped first,
// so a write that may have reached the server is never replayed on it.
func (c *Conversation) request(ctx context.Context, turnID int64, sink Sink) (*reply, error) {
	cfg := c.client.Config()
	notFoundRetried, noLanesRetried := false, false
	var err error
	for attempt := 0; attempt < cfg.MaxAttempts; attempt++ {
		att := &attemptSink{Sink: sink}
		var r *reply
		r, err = c.exchange(ctx, turnID, true, att)
		if err == nil {
			return r, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		wait, why, ok := retryable(err, attempt, cfg)
		if errors.Is(err, errPreviousNotFound) {
			ok, wait = !notFoundRetried, 0
			notFoundRetried = true
		}
		var nl *NoLanesError
		if errors.As(err, &nl) {
			// Once: the retry goes out without stream_id on a connection
			// of its own, which cannot fail this way again.
			ok, wait = nl.Switched && !noLanesRetried, 0
			noLanesRetried = true
		}
		if !ok || attempt+1 == cfg.MaxAttempts {
			break
		}
		c.client.counters.retries.Add(1)
		c.log.Info("retrying model request", "why", why, "wait", wait, "attempt", attempt+2, "err", err)
		att.interrupted(why)
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	return nil, explain(err, c.size)
}

// size describes the conversation for a context-length refusal.
func (c *Conversation) size() string {
	c.mu.Lock()
	n, bytes := len(c.input), 0
	for _, it := range c.input {
		bytes += len(it)
	}
	c.mu.Unlock()
	// ~4 bytes a token, as the API's tokenizers average on English and code.
	return fmt.Sprintf("the session holds %d items, %d KiB, about %d tokens", n, bytes>>10, bytes/4)
}

var errPreviousNotFound = errors.New("previous_response_not_found")

// retryable says whether err may be retried, after how long, and why.
func retryable(err error, attempt int, cfg Config) (time.Duration, string, bool) {
	var ae *APIError
	var re *ResponseError
	var nl *NoLanesError
	switch {
	case errors.As(err, &nl):
		return 0, "the server has no stream_id lanes", nl.Switched
	case errors.Is(err, ErrConnectionLost):
		return backoff(attempt, 100*time.Millisecond, 2*time.Second) * time.Duration(min(attempt, 1)), "the connection was lost", true
	case errors.Is(err, ErrSilence):
		return 0, "the model API went silent", true
	case errors.Is(err, ErrAuth), errors.Is(err, ErrQuota), errors.Is(err, ErrContextLength), errors.Is(err, ErrModelNotFound):
		return 0, "", false // a retry would be refused (and billed) the same way
	case errors.As(err, &ae):
		switch {
		case ae.Code == "previous_response_not_found":
			return 0, "the server no longer had the previous response", true
		case ae.Code == "websocket_connection_limit_reached":
			return 0, "the connection reached its time limit", true
		case ae.Code == "rate_limit_exceeded" || ae.Status == 429:
			return hinted(ae.Message, attempt, cfg), "rate limited", true
		case ae.Status >= 500 || ae.Code == "server_error" || ae.Type == "server_error":
			return backoff(attempt, 500*time.Millisecond, cfg.MaxRetryWait), "the server failed", true
		}
	case errors.As(err, &re):
		if re.Code == "server_error" || re.Code == "rate_limit_exceeded" {
			return backoff(attempt, 500*time.Millisecond, cfg.MaxRetryWait), "the response failed on the server", true
		}
	}
	return 0, "", false
}

var tryAgain = regexp.MustCompile(`(?i)try again in ([0-9.]+)\s*(ms|s)`)

// hinted honours a "try again in 1.5s" hint, else backs off.
func hinted(msg string, attempt int, cfg Config) time.Duration {
	d := backoff(attempt, time.Second, cfg.MaxRetryWait)
	if m := tryAgain.FindStringSubmatch(msg); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			unit := time.Second
			if strings.EqualFold(m[2], "ms") {
				unit = time.Millisecond
			}
			d = time.Duration(v * float64(unit))
		}
	}
	return min(d, cfg.MaxRetryWait)
}

// attemptSink relays one attempt's progress and remembers what the editor
// was shown, so a retry can say so and close the tool calls that will not
// run.
type attemptSink struct {
	Sink
	texted  bool
	pending []ToolCall
}

func (a *attemptSink) Text(d string) {
	a.texted = true
	if a.Sink != nil {
		a.Sink.Text(d)
	}
}

func (a *attemptSink) Thought(d string) {
	a.texted = true
	if a.Sink != nil {
		a.Sink.Thought(d)
	}
}

func (a *attemptSink) ToolCall(call ToolCall, status string, res *ToolResult) {
	if status == "pending" {
		a.pending = append(a.pending, call)
	}
	if a.Sink != nil {
		a.Sink.ToolCall(call, status, res)
	}
}

func (a *attemptSink) Notice(text string) {
	if a.Sink != nil {
		a.Sink.Notice(text)
	}
}

// interrupted tells the editor the attempt is being retried.
func (a *attemptSink) interrupted(why string) {
	if a.Sink == nil {
		return
	}
	for _, call := range a.pending {
		a.Sink.ToolCall(call, "failed", &ToolResult{Output: "not run: " + why + "; the request is being retried", IsError: true})
	}
	if a.texted || len(a.pending) > 0 {
		a.Sink.Notice(fmt.Sprintf("hearth: %s mid-answer; retrying.", why))
	}
}
