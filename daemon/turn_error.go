package daemon

import (
	"fmt"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
)

// turnClasses maps each kind of failure (session.Classify) to the error
// class the editor gets when a turn fails; rpc's table turns the class into
// a code. A rejected API key is ACP's auth error, anything the model API
// refused or could not deliver is a model API error; nil leaves the error
// as it is, so rpc's table finds what it recognises (a cancelled context)
// and only hearth's own failures are internal. Every kind has a row
// (TestEveryFailureKindHasAClass).
var turnClasses = map[session.Kind]error{
	session.KindInternal:      nil,
	session.KindCancelled:     nil,
	session.KindStore:         nil,
	session.KindAuth:          rpc.ErrAuthRequired,
	session.KindQuota:         rpc.ErrModelAPI,
	session.KindContextLength: rpc.ErrModelAPI,
	session.KindModelNotFound: rpc.ErrModelAPI,
	session.KindModelAPI:      rpc.ErrModelAPI,
	session.KindTransient:     rpc.ErrModelAPI,
}

// turnError maps why a turn failed to the error the editor gets.
func turnError(err error) error {
	switch class := turnClasses[session.Classify(err)]; class {
	case nil:
		return fmt.Errorf("turn failed: %w", err)
	case rpc.ErrAuthRequired:
		return fmt.Errorf("%w: %w", class, err)
	default:
		return fmt.Errorf("%w: turn failed: %w", class, err)
	}
}
