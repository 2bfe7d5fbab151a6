package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/store"
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
