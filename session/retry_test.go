package session

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hearthd/hearth/session/responses"
)

// The retry budget is per cause, never per text: each cause has its own
// MaxAttempts failures, a once-only action one, a compaction counts
// against no retries, and a failure nothing fixes is never retried.
func TestRetryBudgetPerCause(t *testing.T) {
	lost := responses.Judge(fmt.Errorf("%w: EOF", responses.ErrConnectionLost))
	unreachable := responses.Judge(fmt.Errorf("dial: %w", responses.ErrConnectionLost))
	server := responses.Judge(&responses.APIError{Status: 500})
	cacheMiss := responses.Judge(&responses.APIError{Status: 400, Code: "previous_response_not_found"})
	tooLong := responses.Judge(&responses.APIError{Status: 400, Code: "context_length_exceeded"})
	refused := responses.Judge(&responses.APIError{Status: 400, Code: "invalid_value"})
	steps := []struct {
		name string
		v    responses.Verdict
		n    int
		ok   bool
	}{
		{"first loss", lost, 0, true},
		{"second loss, worded otherwise", unreachable, 1, true},
		{"a server error has a budget of its own", server, 0, true},
		{"third loss", lost, 2, true},
		{"fourth loss: MaxAttempts spent", lost, 3, false},
		{"a cache miss, once", cacheMiss, 0, true},
		{"a cache miss again", cacheMiss, 1, false},
		{"too long: compact", tooLong, 0, true},
		{"too long after the compaction", tooLong, 1, false},
		{"a refusal", refused, 0, false},
	}
	b := newBudget(4)
	for _, s := range steps {
		if n, ok := b.take(s.v); n != s.n || ok != s.ok {
			t.Errorf("%s: take = %d, %v; want %d, %v", s.name, n, ok, s.n, s.ok)
		}
	}
	if _, ok := newBudget(1).take(tooLong); !ok {
		t.Errorf("with one attempt a request refused for its length is not compacted")
	}
	if _, ok := newBudget(1).take(lost); ok {
		t.Errorf("with one attempt a lost request is retried")
	}
	if errors.Is(explain(errors.New("x"), refused, nil), responses.ErrAuth) {
		t.Errorf("a refusal without advice got some")
	}
}

// A failure judged where its stream was is not judged again: the retry
// loop takes the verdict it carries, and the failure's text and chain stay
// its own.
func TestJudgedOnce(t *testing.T) {
	lost := fmt.Errorf("%w: EOF", responses.ErrConnectionLost)
	carried := responses.Judge(&responses.APIError{Status: 500})
	err := error(&judgedError{err: lost, v: carried})
	if v := judge(err); v.Cause != responses.CauseServerError {
		t.Errorf("judge took %v, not the verdict carried", v.Cause)
	}
	if err.Error() != lost.Error() || !errors.Is(err, responses.ErrConnectionLost) || responses.CauseOf(err) != responses.CauseConnectionLost {
		t.Errorf("the judged failure %q lost its chain", err)
	}
	if v := judge(fmt.Errorf("context: %w", err)); v.Cause != responses.CauseConnectionLost {
		t.Errorf("a judged failure wrapped again is judged anew: got %v", v.Cause)
	}
}
