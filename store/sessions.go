package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrExists is wrapped by CreateSession when the id is already taken.
var ErrExists = errors.New("store: already exists")

// Session is one conversation in a workspace. The row lives until the
// session is deleted; a Session value is a snapshot read at one moment.
type Session struct {
	ID          string
	WorkspaceID int64
	Root        string // the workspace root; filled on read
	Cwd         string // the working directory the session was opened in: Root or a directory below it ("" on create: Root)
	Mode        string
	Model       string // the model it was created with, or ChosenModel
	Title       string
	Created     time.Time
	Updated     time.Time // metadata change or start of a turn
	Spare       bool      // made ahead of time, nobody's yet: not listed (TakeSpare, DeleteSpares)

	// ChosenModel and ChosenEffort are the session's own model and
	// reasoning effort (SetSessionChoice; "" follows the configuration).
	// Filled by Session only.
	ChosenModel, ChosenEffort string
}

// SessionSummary is a Session as listed for a picker: a snapshot with its
// turn count and the time of its latest activity (Updated, the end of its
// last turn, or its last item, whichever is latest).
type SessionSummary struct {
	Session
	Turns        int
	LastActivity time.Time
}

// CreateSession stores a new session whose ID the caller chose. Created and
// Updated default to now. If WorkspaceID is zero, the workspace is looked up
// (or created) by Root.
func (db *DB) CreateSession(ctx context.Context, s Session) error {
	if s.ID == "" {
		return errors.New("store: create session: empty id")
	}
	t := now()
	if s.Created.IsZero() {
		s.Created = t
	}
	if s.Updated.IsZero() {
		s.Updated = s.Created
	}
	if s.Cwd == "" {
		s.Cwd = s.Root
	}
	err := db.write(ctx, func(tx *wtx) error {
		if s.WorkspaceID == 0 {
			w, err := ensureWorkspace(ctx, tx, s.Root)
			if err != nil {
				return fmt.Errorf("workspace: %w", err)
			}
			s.WorkspaceID = w.ID
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO sessions (id, workspace_id, mode, model, title, created, updated, spare, cwd)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.WorkspaceID, s.Mode, s.Model, s.Title, nanos(s.Created), nanos(s.Updated), s.Spare, s.Cwd)
		switch {
		case isPrimaryKey(err):
			return ErrExists
		case isForeignKey(err):
			return fmt.Errorf("workspace %d: %w", s.WorkspaceID, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create session %s: %w", s.ID, err)
	}
	return nil
}

// Session returns the session with the given id, or an error wrapping
// ErrNotFound.
func (db *DB) Session(ctx context.Context, id string) (Session, error) {
	var s Session
	err := db.read(func(r *sql.DB) error {
		var created, updated int64
		err := r.QueryRowContext(ctx, `
			SELECT s.id, s.workspace_id, w.root, s.cwd, s.mode, s.model, s.chosen_model, s.chosen_effort, s.title, s.created, s.updated
			FROM sessions s JOIN workspaces w ON w.id = s.workspace_id
			WHERE s.id = ?`, id).
			Scan(&s.ID, &s.WorkspaceID, &s.Root, &s.Cwd, &s.Mode, &s.Model, &s.ChosenModel, &s.ChosenEffort, &s.Title, &created, &updated)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		s.Created, s.Updated = fromNanos(created), fromNanos(updated)
		return nil
	})
	if err != nil {
		return Session{}, fmt.Errorf("store: session %s: %w", id, err)
	}
	return s, nil
}

// SessionIDsWithPrefix returns the ids that begin with prefix, in order, at
// most limit of them (no limit when limit <= 0): what an abbreviated id
// typed by a user could mean. The comparison is exact (case-sensitive);
// an empty prefix matches nothing.
func (db *DB) SessionIDsWithPrefix(ctx context.Context, prefix string, limit int) ([]string, error) {
	if prefix == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = -1
	}
	var ids []string
	err := db.read(func(r *sql.DB) error {
		// substr, not LIKE: an id may hold "_", which LIKE takes for a wildcard.
		rows, err := r.QueryContext(ctx, `
			SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1 AND spare = 0 ORDER BY id LIMIT ?2`, prefix, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: sessions with id prefix %q: %w", prefix, err)
	}
	return ids, nil
}

// Sessions lists the sessions opened in the directory cwd (every session
// when cwd is ""), most recent activity first, at most limit of them (no
// limit when limit <= 0).
func (db *DB) Sessions(ctx context.Context, cwd string, limit int) ([]SessionSummary, error) {
	return db.SessionsAfter(ctx, cwd, nil, limit, false)
}

// SessionPos is a place in the order Sessions lists sessions in: the
// latest activity and the id of the last session of a page. A value.
type SessionPos struct {
	LastActivity time.Time
	ID           string
}

// SessionsAfter is Sessions resumed after pos (nil: from the start): the
// sessions listed after one whose latest activity and id are pos's — older,
// or as old with a greater id — so that pages do not overlap. shown leaves
// out the sessions that have nothing to show: no turn and no title (opened,
// then left without a prompt).
func (db *DB) SessionsAfter(ctx context.Context, cwd string, pos *SessionPos, limit int, shown bool) ([]SessionSummary, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	after, afterID := int64(0), ""
	if pos != nil {
		after, afterID = nanos(pos.LastActivity), pos.ID
	}
	var out []SessionSummary
	err := db.read(func(r *sql.DB) error {
		// Each correlated subquery is one probe of a (session_id, seq)
		// index: the last turn and the last item are the latest ones.
		rows, err := r.QueryContext(ctx, `
			SELECT * FROM (
				SELECT s.id, s.workspace_id, w.root, s.cwd, s.mode, s.model, s.title, s.created, s.updated,
					(SELECT count(*) FROM turns t WHERE t.session_id = s.id),
					max(s.updated,
						coalesce((SELECT max(t.started, coalesce(t.ended, 0)) FROM turns t
							WHERE t.session_id = s.id ORDER BY t.seq DESC LIMIT 1), 0),
						coalesce((SELECT i.created FROM items i
							WHERE i.session_id = s.id ORDER BY i.seq DESC LIMIT 1), 0)) AS last
				FROM sessions s JOIN workspaces w ON w.id = s.workspace_id
				WHERE (?1 = '' OR s.cwd = ?1) AND s.spare = 0
					AND (?6 = 0 OR s.title != '' OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id)))
			WHERE ?2 = 0 OR last < ?3 OR (last = ?3 AND id > ?4)
			ORDER BY last DESC, id
			LIMIT ?5`, cwd, pos != nil, after, afterID, limit, shown)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ss SessionSummary
			var created, updated, last int64
			if err := rows.Scan(&ss.ID, &ss.WorkspaceID, &ss.Root, &ss.Cwd, &ss.Mode, &ss.Model, &ss.Title,
				&created, &updated, &ss.Turns, &last); err != nil {
				return err
			}
			ss.Created, ss.Updated, ss.LastActivity = fromNanos(created), fromNanos(updated), fromNanos(last)
			out = append(out, ss)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list sessions of %q: %w", cwd, err)
	}
	return out, nil
}

// SetSessionTitle renames a session and bumps its Updated time.
func (db *DB) SetSessionTitle(ctx context.Context, id, title string) error {
	err := db.write(ctx, func(tx *wtx) error {
		return updateSession(ctx, tx, id, `UPDATE sessions SET title = ?, updated = ? WHERE id = ?`, title)
	})
	if err != nil {
		return fmt.Errorf("store: set title of session %s: %w", id, err)
	}
	return nil
}

// SetSessionMode changes a session's mode and bumps its Updated time.
func (db *DB) SetSessionMode(ctx context.Context, id, mode string) error {
	err := db.write(ctx, func(tx *wtx) error {
		return updateSession(ctx, tx, id, `UPDATE sessions SET mode = ?, updated = ? WHERE id = ?`, mode)
	})
	if err != nil {
		return fmt.Errorf("store: set mode of session %s: %w", id, err)
	}
	return nil
}

// SetSessionChoice records a session's own model and reasoning effort ("":
// the configuration's) and bumps its Updated time. A chosen model becomes
// the session's Model too, which inspect shows.
func (db *DB) SetSessionChoice(ctx context.Context, id, model, effort string) error {
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE sessions SET chosen_model = ?1, chosen_effort = ?2, model = CASE WHEN ?1 = '' THEN model ELSE ?1 END, updated = ?3
			WHERE id = ?4`, model, effort, nanos(now()), id)
		if err != nil {
			return err
		}
		return mustAffect(res)
	})
	if err != nil {
		return fmt.Errorf("store: set model of session %s: %w", id, err)
	}
	return nil
}

// updateSession runs query (value, updated, id) inside tx and reports
// ErrNotFound when no row matched.
func updateSession(ctx context.Context, tx *wtx, id, query, value string) error {
	res, err := tx.ExecContext(ctx, query, value, nanos(now()), id)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// TakeSpare makes a spare session the caller's: listed from now on, created
// now. ErrNotFound if id is no spare.
func (db *DB) TakeSpare(ctx context.Context, id string) error {
	t := nanos(now())
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET spare = 0, created = ?, updated = ? WHERE id = ? AND spare = 1`, t, t, id)
		if err != nil {
			return err
		}
		return mustAffect(res)
	})
	if err != nil {
		return fmt.Errorf("store: take spare session %s: %w", id, err)
	}
	return nil
}

// DeleteSpares deletes every spare session (a daemon that stopped left
// them) and returns how many there were.
func (db *DB) DeleteSpares(ctx context.Context) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE spare = 1`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete spare sessions: %w", err)
	}
	return n, nil
}

// DeleteSession removes a session with its turns, items, requests and read
// set.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	defer db.forgetPermissions(id)
	err := db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return mustAffect(res)
	})
	if err != nil {
		return fmt.Errorf("store: delete session %s: %w", id, err)
	}
	return nil
}

// mustAffect turns an UPDATE or DELETE that matched no row into ErrNotFound.
func mustAffect(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
