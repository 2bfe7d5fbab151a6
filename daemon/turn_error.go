package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/responses"
	"github.com/hearthd/hearth/store"
)

// turnClasses maps each kind of failure (responses.Classify) to the error
// class the editor gets when a turn fails; rpc's table turns the class into
// a code. A rejected API key is ACP's auth error, anything the model API
// refused or could not deliver is a model API error, the database failing
// is a store error; nil leaves the error
// as it is, so rpc's table finds what it recognises (a cancelled context)
// and only hearth's own failures are internal. Every kind has a row
// (TestEveryFailureKindHasAClass).
var turnClasses = map[responses.Kind]error{
	responses.KindInternal:      nil,
	responses.KindCancelled:     nil,
	responses.KindStore:         rpc.ErrStore, // storeError adds what to do
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

// storeError marks err as the database failing (rpc.ErrStore, -32012) when
// it is (store.IsFailure), adds what to do (store.Advice: the damaged file's
// move-aside command, or `hearth doctor`) and logs it: the editor and the
// log both see a store error, never "internal error". Other errors pass
// unchanged.
func (d *Daemon) storeError(err error) error {
	if err == nil || !store.IsFailure(err) {
		return err
	}
	d.log.Error("database failure", "db", d.db.Path(), "err", err)
	advice := store.Advice(d.db.Path(), err)
	if errors.Is(err, rpc.ErrStore) {
		return fmt.Errorf("%w; %s", err, advice)
	}
	return fmt.Errorf("%w: %w; %s", rpc.ErrStore, err, advice)
}

// storeErrors applies storeError to a staged call's errors, of either
// stage.
func (c *clientConn) storeErrors(prepare rpc.PrepareFunc) rpc.PrepareFunc {
	return func(ctx context.Context, params json.RawMessage) (func(context.Context) (any, error), error) {
		run, err := prepare(ctx, params)
		if err != nil {
			return nil, c.d.storeError(err)
		}
		return func(ctx context.Context) (any, error) {
			res, err := run(ctx)
			return res, c.d.storeError(err)
		}, nil
	}
}
