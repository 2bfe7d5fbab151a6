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

// turnFailure is what the editor gets when a turn fails of one cause.
type turnFailure struct {
	// class is the error class, which rpc's table turns into a JSON-RPC
	// code; nil leaves the error as it is, so that rpc's table finds what it
	// recognises (a cancelled context) and only hearth's own failures are
	// internal.
	class error
	// lead opens the message, before the failure's own words (which carry
	// the failure table's advice): "" for a failure that needs none.
	lead string
}

// turnFailures maps each cause of failure (responses.Judge) to what the
// editor gets when a turn fails of it. A rejected API key is ACP's auth
// error; anything the model API refused or could not deliver is a model
// API error; the database failing is a store error (storeError adds what to
// do). Every cause has a row (TestEveryFailureCauseHasARow): a new cause is
// a row here and one in responses' failure table.
var turnFailures = map[responses.Cause]turnFailure{
	responses.CauseInternal:         {nil, "turn failed"},
	responses.CauseCancelled:        {nil, "turn failed"},
	responses.CauseStore:            {rpc.ErrStore, "turn failed"},
	responses.CauseAuth:             {rpc.ErrAuthRequired, ""},
	responses.CauseQuota:            {rpc.ErrModelAPI, "turn failed"},
	responses.CauseContextLength:    {rpc.ErrModelAPI, "turn failed"},
	responses.CauseModelNotFound:    {rpc.ErrModelAPI, "turn failed"},
	responses.CauseRefused:          {rpc.ErrModelAPI, "turn failed"},
	responses.CauseResponseRefused:  {rpc.ErrModelAPI, "turn failed"},
	responses.CauseNoLanes:          {rpc.ErrModelAPI, "turn failed"},
	responses.CauseUpgradeRefused:   {rpc.ErrModelAPI, "turn failed"},
	responses.CauseEventTooLarge:    {rpc.ErrModelAPI, "turn failed"},
	responses.CauseNoWebSocket:      {rpc.ErrModelAPI, "turn failed"},
	responses.CauseUpgradeFailed:    {rpc.ErrModelAPI, "turn failed"},
	responses.CauseLanesSwitched:    {rpc.ErrModelAPI, "turn failed"},
	responses.CauseSilence:          {rpc.ErrModelAPI, "turn failed"},
	responses.CauseConnectionLost:   {rpc.ErrModelAPI, "turn failed"},
	responses.CausePreviousNotFound: {rpc.ErrModelAPI, "turn failed"},
	responses.CauseConnectionLimit:  {rpc.ErrModelAPI, "turn failed"},
	responses.CauseRateLimit:        {rpc.ErrModelAPI, "turn failed"},
	responses.CauseServerError:      {rpc.ErrModelAPI, "turn failed"},
	responses.CauseResponseFailed:   {rpc.ErrModelAPI, "turn failed"},
}

// turnError maps why a turn failed to the error the editor gets. A cause
// without a row (which TestEveryFailureCauseHasARow forbids) would be
// internal, never a quiet model API error.
func turnError(err error) error {
	tf, ok := turnFailures[responses.CauseOf(err)]
	if !ok {
		tf = turnFailure{class: rpc.ErrInternal, lead: "turn failed"}
	}
	switch {
	case tf.class == nil:
		return fmt.Errorf("%s: %w", tf.lead, err)
	case tf.lead == "":
		return fmt.Errorf("%w: %w", tf.class, err)
	}
	return fmt.Errorf("%w: %s: %w", tf.class, tf.lead, err)
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
