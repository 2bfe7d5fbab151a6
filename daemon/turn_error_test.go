package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/responses"
	"go.lsp.dev/jsonrpc2"
)

// A new cause of failure is one row in responses' failure table and one
// here: a cause missing from either fails this test, instead of reaching
// the editor as whatever a default says.
func TestEveryFailureCauseHasARow(t *testing.T) {
	for c := range responses.Cause(responses.NumCauses) {
		if strings.HasPrefix(c.String(), "Cause(") {
			t.Errorf("cause %d has no row in responses' failure table", c)
		}
		tf, ok := turnFailures[c]
		if !ok {
			t.Errorf("cause %v has no row in turnFailures", c)
			continue
		}
		if tf.class == nil && tf.lead == "" {
			t.Errorf("cause %v: a row with neither a class nor words", c)
		}
	}
	if len(turnFailures) != responses.NumCauses {
		t.Errorf("turnFailures has %d rows for %d causes", len(turnFailures), responses.NumCauses)
	}
}

// What the editor gets for a turn's failure: the code, and the failure's
// own words (with their advice) in the message.
func TestTurnErrorCodes(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code jsonrpc2.Code
		says string
	}{
		{"key rejected", fmt.Errorf("%w: %w", responses.ErrAuth, &responses.APIError{Status: 401, Code: "invalid_api_key"}), rpc.CodeAuthRequired, "authentication required: the model API rejected the API key"},
		{"no quota", fmt.Errorf("%w: x", responses.ErrQuota), rpc.CodeModelAPI, "model API error: turn failed: the API key has no quota left"},
		{"lost", fmt.Errorf("%w: EOF", responses.ErrConnectionLost), rpc.CodeModelAPI, "model API error: turn failed: connection to the model API lost: EOF"},
		{"store", responses.WithCause(responses.CauseStore, errors.New("commit: disk full")), rpc.CodeStore, "store error: turn failed: commit: disk full"},
		{"cancelled", context.Canceled, rpc.CodeRequestCancelled, "turn failed: context canceled"},
		{"a bug", errors.New("no tool named x"), jsonrpc2.InternalError, "no tool named x"},
	}
	for _, tc := range cases {
		we := rpc.WireError(turnError(tc.err))
		if we.Code != tc.code || !strings.Contains(we.Message, tc.says) {
			t.Errorf("%s: code %d %q, want %d with %q", tc.name, we.Code, we.Message, tc.code, tc.says)
		}
	}
}
