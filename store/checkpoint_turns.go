package store

import (
	"context"
	"database/sql"
	"fmt"
)

// TurnFiles is the files one checkpointed turn changed, in the order first
// changed. A snapshot.
type TurnFiles struct {
	Turn  int64 // the checkpoint's key
	Files []FileCheckpoint
}

// ChangedSince returns the session's turns whose key is after after and
// that are not undone yet, the newest first: what a rewind puts back.
func (c Checkpoints) ChangedSince(ctx context.Context, sessionID string, after int64) ([]TurnFiles, error) {
	var out []TurnFiles
	err := c.db.read(func(db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT turn, path, pre_hash, pre_mode, post_hash, post_mode FROM checkpoint_files
			WHERE session_id = ? AND turn > ? AND undone = 0 ORDER BY turn DESC, id`, sessionID, after)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f FileCheckpoint
			var turn, mode int64
			var pre, post sql.NullString
			var postMode sql.NullInt64
			if err := rows.Scan(&turn, &f.Path, &pre, &mode, &post, &postMode); err != nil {
				return err
			}
			f.PreHash, f.PreMode, f.Post, f.PostMode = pre.String, uint32(mode), post.String, uint32(postMode.Int64)
			if len(out) == 0 || out[len(out)-1].Turn != turn {
				out = append(out, TurnFiles{Turn: turn})
			}
			last := &out[len(out)-1]
			last.Files = append(last.Files, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: read the checkpoints of session %s: %w", sessionID, err)
	}
	return out, nil
}

// FilesBetween counts the files the session's turns keyed in (from,
// through] changed and left changed.
func (c Checkpoints) FilesBetween(ctx context.Context, sessionID string, from, through int64) (int, error) {
	var n int
	err := c.db.read(func(db *sql.DB) error {
		return db.QueryRowContext(ctx, `SELECT count(DISTINCT path) FROM checkpoint_files
			WHERE session_id = ? AND turn > ? AND turn <= ? AND `+leftChanged, sessionID, from, through).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("store: count the checkpointed files of session %s: %w", sessionID, err)
	}
	return n, nil
}
