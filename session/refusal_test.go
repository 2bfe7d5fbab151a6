package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hearthd/hearth/session/responses"
)

// A refusal keeps its kind and both the advice and the API's words; a store
// failure is of the store's kind unless it is a cancellation.
func TestRefusalAndStoreKinds(t *testing.T) {
	api := &responses.APIError{Status: 400, Code: "context_length_exceeded"}
	r := explain(api, responses.Judge(api), func() string { return "12 items" })
	if k := responses.CauseOf(r); k != responses.CauseContextLength || !errors.Is(r, responses.ErrContextLength) || !errors.As(r, &api) ||
		!strings.Contains(r.Error(), "12 items") {
		t.Errorf("explain: %v of cause %v", r, k)
	}
	if k := responses.CauseOf(storeErr(fmt.Errorf("record request: disk full"))); k != responses.CauseStore {
		t.Errorf("a store failure is of cause %v", k)
	}
	if k := responses.CauseOf(storeErr(fmt.Errorf("record request: %w", context.Canceled))); k != responses.CauseCancelled {
		t.Errorf("a store call cancelled with the turn is of cause %v", k)
	}
}
