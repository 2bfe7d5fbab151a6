package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/hearthd/hearth/session/responses"
)

// ErrShutdown is the cause a daemon cancels turns with when it stops: such
// a turn ends as interrupted, not cancelled (the user did not ask).
var ErrShutdown = errors.New("hearth is shutting down")

// errNoWarmupOverHTTP: a warm-up is pointless when every request is full.
var errNoWarmupOverHTTP = errors.New("no warm-up over HTTP")

// refusal is what a turn fails with when the model API refused a request
// for a reason no retry fixes: the sentinel's advice, and the API's own
// words. errors.Is finds both.
type refusal struct {
	kind error // the failure table's advice: responses.ErrAuth, ErrQuota, ErrContextLength, ErrModelNotFound
	err  error
	size string // ErrContextLength: how large the session is
}

func (r *refusal) Error() string {
	if r.size != "" {
		return fmt.Sprintf("%v (%s): %v", r.kind, r.size, r.err)
	}
	return fmt.Sprintf("%v: %v", r.kind, r.err)
}

func (r *refusal) Unwrap() []error { return []error{r.kind, r.err} }

// explain wraps a request's final failure, judged v, with what the user
// can do: the failure table's advice for its cause (and the session's size
// when the advice quotes it). A cause whose row has no advice fails with
// its own words.
func explain(err error, v responses.Verdict, size func() string) error {
	if v.Advice == nil {
		return err
	}
	r := &refusal{kind: v.Advice, err: err}
	if v.ShowSize {
		r.size = size()
	}
	return r
}

// storeErr marks a failure of the store as responses.CauseStore; one that
// is a cancelled context stays a cancellation.
func storeErr(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return responses.WithCause(responses.CauseStore, err)
}
