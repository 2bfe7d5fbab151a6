package store

import (
	"context"
	"database/sql"
	"fmt"
)

// PathsBetween returns the files the session's turns keyed in (from,
// through] changed and left changed, each once, in the order first
// changed, at most limit of them: what FilesBetween counts, by name.
func (c Checkpoints) PathsBetween(ctx context.Context, sessionID string, from, through int64, limit int) ([]string, error) {
	var out []string
	err := c.db.read(func(db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT path FROM checkpoint_files
			WHERE session_id = ? AND turn > ? AND turn <= ? AND pre_hash IS NOT post_hash
			GROUP BY path ORDER BY min(id) LIMIT ?`, sessionID, from, through, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				return err
			}
			out = append(out, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: name the checkpointed files of session %s: %w", sessionID, err)
	}
	return out, nil
}
