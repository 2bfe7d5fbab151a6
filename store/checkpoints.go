package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Checkpoints are the rows saying which files each turn of a session
// changed through hearth's file tools and commands, and what they held before and after
// (the contents themselves are kept outside the database, by hash). Reached
// by DB.Checkpoints, it shares the DB's connections and lives as long as
// the DB; its calls fail with ErrClosed once Close began.
type Checkpoints struct{ db *DB }

// Checkpoints returns the sessions' per-turn file checkpoints.
func (db *DB) Checkpoints() Checkpoints { return Checkpoints{db} }

// FileCheckpoint is one file a turn changed. A snapshot read at one moment.
type FileCheckpoint struct {
	Path    string // relative to the workspace root, slash-separated
	PreHash string // "" when the file did not exist before the turn
	PreMode uint32 // its permission bits before the turn
	Post    string // its content's hash after the turn; "" when the turn removed it
	// PostMode is its permission bits after the turn; 0 when unknown
	// (then only the content tells whether the turn changed it).
	PostMode uint32
	PreSize  int64 // the pre-image's size in bytes (the budget counts it)
	// PostSize is the size of what the turn left, kept as an object too
	// (for the diff of a conflict) when PostKept; the budget counts it.
	PostSize int64
	PostKept bool
}

// Record notes that turn (a key the caller gives, unique within the
// session) changed f.Path. The first record of a path in a turn keeps its
// pre-image; later ones only update what the file holds after.
func (c Checkpoints) Record(ctx context.Context, sessionID string, turn int64, f FileCheckpoint) error {
	err := c.db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_files (session_id, turn, path, pre_hash, pre_mode, post_hash, created, pre_size, post_size, post_mode)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (session_id, turn, path) DO UPDATE SET post_hash = excluded.post_hash, post_size = excluded.post_size,
				post_mode = excluded.post_mode`,
			sessionID, turn, f.Path, nullString(f.PreHash), int64(f.PreMode), nullString(f.Post), nanos(now()), f.PreSize, postSize(f), nullMode(f.PostMode))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: record the checkpoint of %s in session %s: %w", f.Path, sessionID, err)
	}
	return nil
}

// LastChanged returns the session's last turn not undone yet that left a
// file changed, and its files in the order first changed; found is false
// when there is none. A turn whose files all ended as they began is passed
// over.
func (c Checkpoints) LastChanged(ctx context.Context, sessionID string) (turn int64, files []FileCheckpoint, found bool, err error) {
	err = c.db.read(func(db *sql.DB) error {
		err := db.QueryRowContext(ctx, `SELECT turn FROM checkpoint_files WHERE session_id = ? AND undone = 0
			AND `+leftChanged+` ORDER BY id DESC LIMIT 1`, sessionID).Scan(&turn)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		rows, err := db.QueryContext(ctx, `SELECT path, pre_hash, pre_mode, post_hash, post_mode FROM checkpoint_files
			WHERE session_id = ? AND turn = ? ORDER BY id`, sessionID, turn)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f FileCheckpoint
			var pre, post sql.NullString
			var mode int64
			var postMode sql.NullInt64
			if err := rows.Scan(&f.Path, &pre, &mode, &post, &postMode); err != nil {
				return err
			}
			f.PreHash, f.PreMode, f.Post, f.PostMode = pre.String, uint32(mode), post.String, uint32(postMode.Int64)
			files = append(files, f)
		}
		return rows.Err()
	})
	if err != nil {
		return 0, nil, false, fmt.Errorf("store: read the last checkpoint of session %s: %w", sessionID, err)
	}
	return turn, files, found, nil
}

// MarkUndone marks the session's turn as undone: LastChanged passes it over.
func (c Checkpoints) MarkUndone(ctx context.Context, sessionID string, turn int64) error {
	err := c.db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE checkpoint_files SET undone = 1 WHERE session_id = ? AND turn = ?`, sessionID, turn)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: mark turn %d of session %s undone: %w", turn, sessionID, err)
	}
	return nil
}

// leftChanged is the SQL condition of a row whose file the turn left
// changed: its content, or its mode alone.
const leftChanged = `(pre_hash IS NOT post_hash OR (post_mode IS NOT NULL AND post_mode != pre_mode))`

// nullMode is m, or NULL when it is 0 (unknown).
func nullMode(m uint32) any {
	if m == 0 {
		return nil
	}
	return int64(m)
}

// nullString is s, or NULL when s is empty.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// postSize is what the budget counts of f's post-image: its size when it
// is kept.
func postSize(f FileCheckpoint) int64 {
	if f.PostKept {
		return f.PostSize
	}
	return 0
}
