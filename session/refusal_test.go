package session

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hearthd/hearth/session/responses"
)

// A refusal keeps its kind and both the advice and the API's words; a store
// failure is of the store's kind unless it is a cancellation.
func TestRefusalAndStoreKinds(t *testing.T) {
	api := &responses.APIError{Status: 400, Code: "context_length_exceeded"}
	r := explain(api, func() string { return "12 items" })
	if k := responses.Classify(r); k != responses.KindContextLength || !errors.Is(r, responses.ErrContextLength) || !errors.As(r, &api) {
		t.Errorf("explain: %v of kind %v", r, k)
	}
	if k := responses.Classify(storeErr(fmt.Errorf("record request: disk full"))); k != responses.KindStore {
		t.Errorf("a store failure is of kind %v", k)
	}
	if k := responses.Classify(storeErr(fmt.Errorf("record request: %w", context.Canceled))); k != responses.KindCancelled {
		t.Errorf("a store call cancelled with the turn is of kind %v", k)
	}
}
