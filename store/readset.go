package store

import (
	"context"
	"database/sql"
	"fmt"
)

// The read set is the files the model has seen in a session, each with the
// hash of the content it saw; the context delta sent before a request is
// computed against it. Rows live as long as their session.

// SetRead records that the model has seen path with content hash, replacing
// any earlier hash for the same path.
func (db *DB) SetRead(ctx context.Context, sessionID, path, hash string) error {
	err := db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO read_set (session_id, path, hash, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT (session_id, path) DO UPDATE SET hash = excluded.hash, updated = excluded.updated`,
			sessionID, path, hash, nanos(now()))
		if isForeignKey(err) {
			return fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set read %s in session %s: %w", path, sessionID, err)
	}
	return nil
}

// ReadSet returns the read set of a session: path → content hash. An
// unknown session has an empty read set.
func (db *DB) ReadSet(ctx context.Context, sessionID string) (map[string]string, error) {
	out := make(map[string]string)
	err := db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `SELECT path, hash FROM read_set WHERE session_id = ?`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var path, hash string
			if err := rows.Scan(&path, &hash); err != nil {
				return err
			}
			out[path] = hash
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: read set of session %s: %w", sessionID, err)
	}
	return out, nil
}
