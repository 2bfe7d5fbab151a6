package daemon

import (
	"errors"
	"fmt"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
)

// turnError maps why a turn failed to the error class the editor gets
// (rpc's table turns the class into a code): a rejected API key is ACP's
// auth error, anything the model API refused or could not deliver is a
// model API error, and only hearth's own failures stay internal.
func turnError(err error) error {
	var (
		ae *session.APIError
		re *session.ResponseError
		he *session.HandshakeError
		nl *session.NoLanesError
	)
	switch {
	case errors.Is(err, session.ErrAuth):
		return fmt.Errorf("%w: %w", rpc.ErrAuthRequired, err)
	case errors.Is(err, session.ErrQuota), errors.Is(err, session.ErrContextLength),
		errors.Is(err, session.ErrModelNotFound), errors.Is(err, session.ErrConnectionLost), errors.Is(err, session.ErrSilence),
		errors.As(err, &ae), errors.As(err, &re), errors.As(err, &he), errors.As(err, &nl):
		return fmt.Errorf("%w: turn failed: %w", rpc.ErrModelAPI, err)
	}
	return fmt.Errorf("turn failed: %w", err)
}
