package session

import (
	"context"
	"fmt"
	"time"

	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/session/transcript"
)

// request sends one model request of a turn and retries what Judge says
// is safe to retry. Nothing of a failed response was applied — output items
// are committed and tools run only after response.completed — so a retry
// can never run a tool twice or write an item twice.
func (c *Conversation) request(ctx context.Context, turnID int64, sink Sink) (*reply, error) {
	cfg := c.Config()
	spent := map[string]bool{} // retries allowed once per request, by kind
	// Each cause has its own budget of MaxAttempts failures, so a request
	// whose own response kept failing is not also failed by the one
	// connection loss a sibling caused on its last attempt; the total is
	// bounded all the same.
	tries := map[string]int{}
	var err error
	for attempt := 0; attempt < 2*cfg.MaxAttempts; attempt++ {
		att := &attemptSink{Sink: sink}
		var r *reply
		r, err = c.exchange(ctx, turnID, true, att)
		if err == nil {
			return r, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		if responses.Classify(err) == responses.KindContextLength && !spent["compact"] {
			// Once: go on from a summary, then send again.
			spent["compact"] = true
			if cerr := c.compact(ctx, turnID, sink, CompactRefused); cerr == nil {
				continue
			} else {
				c.log.Info("compaction after a context_length_exceeded refusal failed", "err", cerr)
			}
		}
		v := responses.Judge(err, tries[responses.Judge(err, 0, cfg.MaxRetryWait).Why], cfg.MaxRetryWait)
		tries[v.Why]++
		if !v.Retry || (v.Once != "" && spent[v.Once]) || tries[v.Why] >= cfg.MaxAttempts || attempt+1 == 2*cfg.MaxAttempts {
			break
		}
		if v.Once != "" {
			spent[v.Once] = true
		}
		c.client.counters.retries.Add(1)
		c.log.Info("retrying model request", "why", v.Why, "wait", v.Wait, "attempt", attempt+2, "of_this_cause", tries[v.Why], "err", err)
		att.interrupted(v.Why)
		if err := sleep(ctx, v.Wait); err != nil {
			return nil, err
		}
	}
	return nil, explain(err, func() string { return sizeOf(c.tr) })
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
