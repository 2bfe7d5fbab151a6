package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Notes are what hearth must tell a session's model before its next
// request (what an undo or a rewind changed under it), kept until a
// prompt's input holds them. Reached by DB.Notes, it shares the DB's
// connections and lives as long as the DB.
type Notes struct{ db *DB }

// Notes returns the sessions' pending notes.
func (db *DB) Notes() Notes { return Notes{db} }

// Note is one pending note: a snapshot.
type Note struct {
	ID   int64
	Text string
}

// Save keeps a note for the session's model.
func (n Notes) Save(ctx context.Context, sessionID, text string) error {
	err := n.db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO session_notes (session_id, note, created) VALUES (?, ?, ?)`,
			sessionID, text, nanos(now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: keep a note for session %s: %w", sessionID, err)
	}
	return nil
}

// Pending returns the session's notes, oldest first.
func (n Notes) Pending(ctx context.Context, sessionID string) ([]Note, error) {
	var out []Note
	err := n.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `SELECT id, note FROM session_notes WHERE session_id = ? ORDER BY id`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var x Note
			if err := rows.Scan(&x.ID, &x.Text); err != nil {
				return err
			}
			out = append(out, x)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: read the notes of session %s: %w", sessionID, err)
	}
	return out, nil
}

// Forget forgets notes the model was told.
func (n Notes) Forget(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := n.db.write(ctx, func(tx *wtx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM session_notes WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: forget told notes: %w", err)
	}
	return nil
}
