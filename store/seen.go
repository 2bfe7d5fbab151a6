package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
)

// The read set is the files the model has seen in a session, each with
// what it saw (Seen); the context delta sent before a request is computed
// against it. Rows live as long as their session.

// Memory is what a session remembers beside its transcript: the read set
// and the user's remembered permission answers. Reached by DB.Memory, it
// shares the DB's connections and compiled statements and lives as long as
// the DB; its calls fail with ErrClosed once Close began.
type Memory struct{ db *DB }

// Seen is what the model last saw of one file: the content hash and, when
// small enough to keep, the content itself (the delta's diff needs it).
type Seen struct {
	Hash    string
	Content []byte // nil when not kept
}

// SetSeen records what the model saw of path (read or written), replacing
// the earlier entry.
func (m Memory) SetSeen(ctx context.Context, sessionID, path string, s Seen) error {
	err := m.db.write(ctx, func(tx *wtx) error { return setSeenTx(ctx, tx, sessionID, path, s) })
	if err != nil {
		return fmt.Errorf("store: set seen %s in session %s: %w", path, sessionID, err)
	}
	return nil
}

// SeenWrite is one read-set update committed with a request
// (Requests.InsertAfter).
type SeenWrite struct {
	Path string
	Seen Seen
}

// setSeenTx records s. An entry that already says the same (a file read
// again unchanged, as models often do) is left as it is: no page of the
// database is written for it, and updated keeps the time it last changed.
func setSeenTx(ctx context.Context, tx *wtx, sessionID, path string, s Seen) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO read_set (session_id, path, hash, content, updated) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (session_id, path) DO UPDATE SET hash = excluded.hash, content = excluded.content, updated = excluded.updated
		WHERE read_set.hash IS NOT excluded.hash OR (read_set.content IS NULL AND excluded.content IS NOT NULL)`,
		sessionID, path, s.Hash, s.Content, nanos(now()))
	if isForeignKey(err) {
		return fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("set seen %s: %w", path, err)
	}
	return nil
}

// SeenFiles returns the read set with contents: path → Seen.
func (m Memory) SeenFiles(ctx context.Context, sessionID string) (map[string]Seen, error) {
	out := make(map[string]Seen)
	err := m.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `SELECT path, hash, content FROM read_set WHERE session_id = ?`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var path, hash string
			var content []byte
			if err := rows.Scan(&path, &hash, &content); err != nil {
				return err
			}
			out[path] = Seen{Hash: hash, Content: content}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: seen files of session %s: %w", sessionID, err)
	}
	return out, nil
}

// ReadSet returns the hashes of a session's read set, path → content hash,
// without the stored texts: the context delta fetches a text (SeenContent)
// only for a file that changed. An unknown session has an empty read set.
func (m Memory) ReadSet(ctx context.Context, sessionID string) (map[string]string, error) {
	out := make(map[string]string)
	err := m.db.read(func(r *sql.DB) error {
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

// SeenContent returns the content kept for path in the read set: nil when
// none is (or path is not in it). With ReadSet (the hashes), it lets the
// context delta load only the texts of the files that changed.
func (m Memory) SeenContent(ctx context.Context, sessionID, path string) ([]byte, error) {
	var content []byte
	err := m.db.read(func(r *sql.DB) error {
		err := r.QueryRowContext(ctx, `SELECT content FROM read_set WHERE session_id = ? AND path = ?`, sessionID, path).Scan(&content)
		if err == sql.ErrNoRows {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: seen content of %s in session %s: %w", path, sessionID, err)
	}
	return content, nil
}

// ForgetSeen drops path from the read set: the model no longer knows it.
func (m Memory) ForgetSeen(ctx context.Context, sessionID, path string) error {
	err := m.db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM read_set WHERE session_id = ? AND path = ?`, sessionID, path)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: forget seen %s in session %s: %w", path, sessionID, err)
	}
	return nil
}

// Decision is a remembered permission answer.
type Decision string

const (
	Allow  Decision = "allow"
	Reject Decision = "reject"
)

// SetPermission remembers the user's "always" answer for tool in a session.
func (m Memory) SetPermission(ctx context.Context, sessionID, tool string, d Decision) error {
	defer m.db.forgetPermissions(sessionID)
	err := m.db.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO permissions (session_id, tool, decision, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT (session_id, tool) DO UPDATE SET decision = excluded.decision, updated = excluded.updated`,
			sessionID, tool, string(d), nanos(now()))
		if isForeignKey(err) {
			return fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set permission %s in session %s: %w", tool, sessionID, err)
	}
	return nil
}

// Permissions returns a session's remembered answers: tool → decision,
// the caller's to change. They are read once and kept: every approval asks.
func (m Memory) Permissions(ctx context.Context, sessionID string) (map[string]Decision, error) {
	m.db.permMu.Lock()
	defer m.db.permMu.Unlock()
	if kept, ok := m.db.perms[sessionID]; ok {
		return maps.Clone(kept), nil
	}
	out, err := m.readPermissions(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if m.db.perms == nil {
		m.db.perms = map[string]map[string]Decision{}
	}
	m.db.perms[sessionID] = maps.Clone(out)
	return out, nil
}

// forgetPermissions drops what Permissions kept of a session's, once they
// may have changed in the database.
func (db *DB) forgetPermissions(sessionID string) {
	db.permMu.Lock()
	delete(db.perms, sessionID)
	db.permMu.Unlock()
}

func (m Memory) readPermissions(ctx context.Context, sessionID string) (map[string]Decision, error) {
	out := make(map[string]Decision)
	err := m.db.read(func(r *sql.DB) error {
		rows, err := r.QueryContext(ctx, `SELECT tool, decision FROM permissions WHERE session_id = ?`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var tool, d string
			if err := rows.Scan(&tool, &d); err != nil {
				return err
			}
			out[tool] = Decision(d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: permissions of session %s: %w", sessionID, err)
	}
	return out, nil
}
