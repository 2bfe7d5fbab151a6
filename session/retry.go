package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/transcript"
)

// request sends one model request of a turn and does what Judge says of
// each failure (judged), compacting a view too large for the window; the
// final failure carries what the user can do (explain). Nothing of a
// failed response was applied — output items are committed and tools run
// only after response.completed — so a retry can never run a tool twice or
// write an item twice.
func (c *Conversation) request(ctx context.Context, turnID int64, sink Sink) (*reply, error) {
	var att *attemptSink
	r, v, err := c.judged(ctx, func() (*reply, error) {
		att = &attemptSink{Sink: sink}
		return c.exchange(ctx, turnID, true, att)
	}, func(why string) { att.interrupted(why) }, func() error {
		// Go on from a summary, then send again.
		return c.compact(ctx, turnID, sink, CompactRefused)
	}, func(until time.Time) error { return park(ctx, sink, until) })
	if err != nil && ctx.Err() == nil {
		return nil, explain(err, v, func() string { return sizeOf(c.tr) })
	}
	if err != nil && att != nil && att.shown.Len() > 0 {
		// Cancelled mid-answer: what the user saw stays in the history
		// the editor is shown again (never in the model's view).
		if kerr := c.tr.Turns().KeepShown(context.WithoutCancel(ctx), turnID, transcript.ShownCancelled, att.kept()); kerr != nil {
			c.log.Warn("keeping the cancelled answer failed", "err", kerr)
		}
	}
	return r, err
}

// judged sends one model request through its failures: send is one
// attempt, and each failure is judged once (responses.Judge) and counted
// against its cause's budget. A retry goes again after its wait, a re-warm
// or a full resend at once (told is called first, with why); a compaction
// goes again once smaller made the request fit, and ends the attempts
// when there is no smaller (the caller's to do) or it failed. A rate limit
// that says when it resets parks the request there (park, when not nil),
// outside the budget, at most maxParks times. It returns
// the last failure and its verdict; a failure once ctx has ended is
// returned as it is, unjudged.
func (c *Conversation) judged(ctx context.Context, send func() (*reply, error), told func(why string), smaller func() error, park func(until time.Time) error) (*reply, responses.Verdict, error) {
	cfg := c.Config()
	b := newBudget(cfg.MaxAttempts)
	var err error
	var v responses.Verdict
	parks := 0
	for attempt := 0; attempt < 2*cfg.MaxAttempts; attempt++ {
		var r *reply
		if r, err = send(); err == nil {
			return r, responses.Verdict{}, nil
		}
		if ctx.Err() != nil {
			return nil, responses.Verdict{}, err
		}
		v = judge(err)
		if until, ok := responses.ResetOf(err, time.Now()); ok && park != nil && parks < maxParks {
			// A rate limit that says when: the turn waits for it, then
			// goes again, outside the retries' budget.
			parks++
			attempt--
			c.client.counters.retries.Add(1)
			c.log.Info("rate limited: the turn is parked", "until", until, "err", err)
			if told != nil {
				told(v.Why)
			}
			if perr := park(until); perr != nil {
				return nil, responses.Verdict{}, err
			}
			continue
		}
		n, ok := b.take(v)
		if !ok || attempt+1 == 2*cfg.MaxAttempts {
			break
		}
		if v.Action == responses.Compact {
			if smaller == nil {
				break
			}
			if cerr := smaller(); cerr != nil {
				c.log.Info("compaction after a context_length_exceeded refusal failed", "err", cerr)
				break
			}
			continue
		}
		wait := v.Wait(n, cfg.MaxRetryWait)
		c.client.counters.retries.Add(1)
		c.log.Info("retrying model request", "why", v.Why, "cause", v.Cause, "action", v.Action, "wait", wait,
			"attempt", attempt+2, "of_this_cause", n+1, "err", err)
		if told != nil {
			told(v.Why)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, responses.Verdict{}, err
		}
	}
	return nil, v, err
}

// maxParks bounds how many times one model request waits for a rate
// limit's reset before its failures count as retries again.
const maxParks = 8

// park waits, its turn parked, until a rate limit resets (or ctx ends:
// session/cancel ends it at once), after telling the user when it goes on.
func park(ctx context.Context, sink Sink, until time.Time) error {
	Notify(sink, NoticeWarning, "hearth: rate limited; resuming at "+responses.ClockTime(until)+".")
	return sleep(ctx, time.Until(until))
}

// judgedError is a failure judged where its stream was (failed), carried
// to the retry loop so that it is judged once. Its text and chain are the
// failure's. Made per failure.
type judgedError struct {
	err error
	v   responses.Verdict
}

func (e *judgedError) Error() string { return e.err.Error() }
func (e *judgedError) Unwrap() error { return e.err }

// judge is err's verdict: the one it was given when it was judged, else
// Judge's.
func judge(err error) responses.Verdict {
	if je, ok := err.(*judgedError); ok {
		return je.v
	}
	return responses.Judge(err)
}

// budget is what one model request may still retry, per cause: each cause
// has its own MaxAttempts failures, so a request whose own response kept
// failing is not also failed by the one connection loss a sibling caused
// on its last attempt (request bounds the total all the same); a cause
// whose action is taken once (Verdict.Once) has one, and a compaction,
// which sends a smaller request, counts against no retries. Made per
// request.
type budget struct {
	max   int
	tries map[responses.Cause]int
}

func newBudget(maxAttempts int) *budget {
	return &budget{max: maxAttempts, tries: map[responses.Cause]int{}}
}

// take counts a failure judged v and reports whether the request goes
// again (v's action is one that sends it again, and its cause has attempts
// left), and how many failures of that cause came before it.
func (b *budget) take(v responses.Verdict) (n int, ok bool) {
	n = b.tries[v.Cause]
	b.tries[v.Cause]++
	switch v.Action {
	case responses.Retry, responses.Rewarm, responses.Resend, responses.Compact:
	default: // Fail; FallBackHTTP is the handshake's
		return n, false
	}
	if v.Once && n > 0 {
		return n, false
	}
	if v.Action == responses.Compact {
		return n, true // the request that goes again is another, smaller one: no retry of this one
	}
	return n, n+1 < b.max
}

// sizeOf describes a conversation's transcript for a context-length
// refusal.
func sizeOf(tr *transcript.Transcript) string {
	in := tr.Input()
	n, bytes := len(in), 0
	for _, it := range in {
		bytes += len(it)
	}
	// ~4 bytes a token, as the API's tokenizers average on English and code.
	return fmt.Sprintf("the session holds %d items, %d KiB, about %d tokens", n, bytes>>10, bytes/4)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// attemptSink relays one attempt's progress and remembers what the editor
// was shown, so a retry can say so and close the tool calls that will not
// run.
type attemptSink struct {
	Sink
	texted  bool
	pending []ToolCall
	shown   strings.Builder // the answer's text so far, up to maxKeptShown: kept if the turn is cancelled
	unkept  int             // the bytes of it past maxKeptShown
}

// maxKeptShown bounds what is kept of an answer cut short by a cancel: a
// copy of a long answer would double what the daemon holds while it
// streams.
const maxKeptShown = 1 << 20

func (a *attemptSink) Text(d string) {
	a.texted = true
	if a.unkept == 0 && a.shown.Len()+len(d) <= maxKeptShown {
		a.shown.WriteString(d)
	} else {
		a.unkept += len(d)
	}
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

// kept is what is kept of the text shown: all of it, or its first
// maxKeptShown bytes and how much more there was.
func (a *attemptSink) kept() string {
	if a.unkept == 0 {
		return a.shown.String()
	}
	return fmt.Sprintf("%s\n\n[… %d more bytes were shown, not kept]", a.shown.String(), a.unkept)
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
		Notify(a.Sink, NoticeWarning, fmt.Sprintf("hearth: %s mid-answer; retrying.", why))
	}
}
