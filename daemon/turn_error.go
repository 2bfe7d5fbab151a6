package daemon

import (
	"fmt"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/responses"
)

// turnClasses maps each kind of failure (responses.Classify) to the error
// class the editor gets when a turn fails; rpc's table turns the class into
// a code. A rejected API key is ACP's auth error, anything the model API
// refused or could not deliver is a model API error; nil leaves the error
// as it is, so rpc's table finds what it recognises (a cancelled context)
// and only hearth's own failures are internal. Every kind has a row
// (TestEveryFailureKindHasAClass).
var turnClasses = map[responses.Kind]error{
	responses.KindInternal:      nil,
	responses.KindCancelled:     nil,
	responses.KindStore:         nil,
	responses.KindAuth:          rpc.ErrAuthRequired,
	responses.KindQuota:         rpc.ErrModelAPI,
	responses.KindContextLength: rpc.ErrModelAPI,
	responses.KindModelNotFound: rpc.ErrModelAPI,
	responses.KindModelAPI:      rpc.ErrModelAPI,
	responses.KindTransient:     rpc.ErrModelAPI,
}

// turnError maps why a turn failed to the error the editor gets.
func turnError(err error) error {
	switch class := turnClasses[responses.Classify(err)]; class {
	case nil:
		return fmt.Errorf("turn failed: %w", err)
	case rpc.ErrAuthRequired:
		return fmt.Errorf("%w: %w", class, err)
	default:
		return fmt.Errorf("%w: turn failed: %w", class, err)
	}
}
