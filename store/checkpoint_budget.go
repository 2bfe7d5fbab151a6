package store

import (
	"context"
	"database/sql"
	"fmt"
)

// CheckpointBudget bounds the checkpoints of one workspace (every session
// in it): at most Turns checkpointed turns, whose pre-images take at most
// Bytes. A plain value.
type CheckpointBudget struct {
	Bytes int64
	Turns int
}

// Trimmed is what Trim dropped. A snapshot.
type Trimmed struct {
	Turns   int      // checkpointed turns dropped
	Through int64    // the newest key dropped (0 when none)
	Hashes  []string // the pre-images the dropped rows kept: the caller unlinks those no row needs (Unreferenced)
}

// checkpointTurn is one checkpointed turn of a workspace and its size.
type checkpointTurn struct {
	session string
	turn    int64
	size    int64
}

// Trim drops the oldest checkpointed turns of the workspace session
// sessionID works in until what is left is within b, in one transaction,
// and notes for each session the newest key dropped (TrimmedThrough). The
// pre-images stay: the caller unlinks them after the commit, so a crash
// between leaves objects no row names (swept later), never a row without
// its object.
func (c Checkpoints) Trim(ctx context.Context, sessionID string, b CheckpointBudget) (Trimmed, error) {
	var out Trimmed
	err := c.db.write(ctx, func(tx *wtx) error {
		out = Trimmed{}
		drop, err := overBudget(ctx, tx, sessionID, b)
		if err != nil || len(drop) == 0 {
			return err
		}
		seen := map[string]bool{}
		for _, d := range drop {
			rows, err := tx.QueryContext(ctx, `SELECT pre_hash FROM checkpoint_files WHERE session_id = ?1 AND turn = ?2 AND pre_hash IS NOT NULL
				UNION SELECT post_hash FROM checkpoint_files WHERE session_id = ?1 AND turn = ?2 AND post_size > 0`, d.session, d.turn)
			if err != nil {
				return err
			}
			for rows.Next() {
				var h string
				if err := rows.Scan(&h); err != nil {
					rows.Close()
					return err
				}
				if !seen[h] {
					seen[h] = true
					out.Hashes = append(out.Hashes, h)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoint_files WHERE session_id = ? AND turn = ?`, d.session, d.turn); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_trims (session_id, through) VALUES (?, ?)
				ON CONFLICT (session_id) DO UPDATE SET through = max(through, excluded.through)`, d.session, d.turn); err != nil {
				return err
			}
			out.Turns++
			out.Through = max(out.Through, d.turn)
		}
		return nil
	})
	if err != nil {
		return Trimmed{}, fmt.Errorf("store: keep the checkpoints of session %s's workspace within their budget: %w", sessionID, err)
	}
	return out, nil
}

// overBudget lists the checkpointed turns of sessionID's workspace past b,
// the newest kept first: everything after the first turn, newest first,
// that would take the count past b.Turns or the bytes past b.Bytes.
func overBudget(ctx context.Context, tx *wtx, sessionID string, b CheckpointBudget) ([]checkpointTurn, error) {
	rows, err := tx.QueryContext(ctx, `SELECT session_id, turn, sum(pre_size + post_size) FROM checkpoint_files
		WHERE session_id IN (SELECT id FROM sessions WHERE workspace_id = (SELECT workspace_id FROM sessions WHERE id = ?))
		GROUP BY session_id, turn ORDER BY turn DESC`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var drop []checkpointTurn
	var n int
	var bytes int64
	for rows.Next() {
		var t checkpointTurn
		if err := rows.Scan(&t.session, &t.turn, &t.size); err != nil {
			return nil, err
		}
		if len(drop) == 0 && n < b.Turns && bytes+t.size <= b.Bytes {
			n, bytes = n+1, bytes+t.size
			continue
		}
		drop = append(drop, t) // and every older one: the oldest go first
	}
	return drop, rows.Err()
}

// TrimmedThrough returns the newest checkpoint key of the session that
// was dropped for the budget, 0 when none was.
func (c Checkpoints) TrimmedThrough(ctx context.Context, sessionID string) (int64, error) {
	var through int64
	err := c.db.read(func(db *sql.DB) error {
		err := db.QueryRowContext(ctx, `SELECT through FROM checkpoint_trims WHERE session_id = ?`, sessionID).Scan(&through)
		if err == sql.ErrNoRows {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: read the checkpoints dropped of session %s: %w", sessionID, err)
	}
	return through, nil
}

// Unreferenced returns those of hashes that no checkpoint row keeps.
func (c Checkpoints) Unreferenced(ctx context.Context, hashes []string) ([]string, error) {
	var out []string
	err := c.db.read(func(db *sql.DB) error {
		out = out[:0]
		for _, h := range hashes {
			var one int
			err := db.QueryRowContext(ctx, `SELECT 1 FROM checkpoint_files WHERE pre_hash = ?1
				UNION ALL SELECT 1 FROM checkpoint_files WHERE post_hash = ?1 LIMIT 1`, h).Scan(&one)
			switch {
			case err == sql.ErrNoRows:
				out = append(out, h)
			case err != nil:
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: look up checkpoint objects: %w", err)
	}
	return out, nil
}

// Referenced returns every hash a checkpoint row keeps.
func (c Checkpoints) Referenced(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := c.db.read(func(db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT pre_hash FROM checkpoint_files WHERE pre_hash IS NOT NULL
			UNION SELECT post_hash FROM checkpoint_files WHERE post_size > 0`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				return err
			}
			out[h] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list checkpoint objects: %w", err)
	}
	return out, nil
}
