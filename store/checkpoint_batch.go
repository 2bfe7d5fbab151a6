package store

import (
	"context"
	"fmt"
)

// TurnFile is one file of one turn, for RecordAll. A plain value.
type TurnFile struct {
	Turn int64
	FileCheckpoint
}

// RecordAll is Record for several files of the session in one
// transaction: what a command changed, recorded as its call ends.
func (c Checkpoints) RecordAll(ctx context.Context, sessionID string, files []TurnFile) error {
	if len(files) == 0 {
		return nil
	}
	err := c.db.write(ctx, func(tx *wtx) error {
		for _, f := range files {
			_, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_files (session_id, turn, path, pre_hash, pre_mode, post_hash, created, post_mode)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (session_id, turn, path) DO UPDATE SET post_hash = excluded.post_hash, post_mode = excluded.post_mode`,
				sessionID, f.Turn, f.Path, nullString(f.PreHash), int64(f.PreMode), nullString(f.Post), nanos(now()), nullMode(f.PostMode))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: record the checkpoints of %d files in session %s: %w", len(files), sessionID, err)
	}
	return nil
}
