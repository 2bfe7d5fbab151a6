package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Rules are the user's "always allow" answers kept per workspace, across
// sessions and restarts, until revoked. Reached by DB.Rules, it shares the
// DB's connections and lives as long as the DB; its calls fail with
// ErrClosed once Close began.
type Rules struct{ db *DB }

// RuleKind says what a rule's pattern is.
type RuleKind string

const (
	RuleCommand RuleKind = "command" // a command prefix: its words joined by single spaces
	RulePath    RuleKind = "path"    // a workspace-relative, slash-separated file path
)

// Rule is one kept answer. A snapshot read at one moment.
type Rule struct {
	ID      int64
	Root    string // the workspace's
	Kind    RuleKind
	Pattern string
	Created time.Time
}

// Keep keeps a rule for the workspace at root (created when new); adding
// one that exists returns it as it was.
func (r Rules) Keep(ctx context.Context, root string, kind RuleKind, pattern string) (Rule, error) {
	out := Rule{Root: root, Kind: kind, Pattern: pattern}
	err := r.db.write(ctx, func(tx *wtx) error {
		w, err := ensureWorkspace(ctx, tx, root)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO rules (workspace_id, kind, pattern, created) VALUES (?, ?, ?, ?)
			ON CONFLICT (workspace_id, kind, pattern) DO NOTHING`, w.ID, string(kind), pattern, nanos(now())); err != nil {
			return err
		}
		var created int64
		if err := tx.QueryRowContext(ctx, `SELECT id, created FROM rules WHERE workspace_id = ? AND kind = ? AND pattern = ?`,
			w.ID, string(kind), pattern).Scan(&out.ID, &created); err != nil {
			return err
		}
		out.Created = fromNanos(created)
		return nil
	})
	if err != nil {
		return Rule{}, fmt.Errorf("store: add %s rule %q for %s: %w", kind, pattern, root, err)
	}
	return out, nil
}

// Patterns returns the patterns of the workspace at root's rules of kind,
// oldest first.
func (r Rules) Patterns(ctx context.Context, root string, kind RuleKind) ([]string, error) {
	var out []string
	err := r.db.read(func(db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT r.pattern FROM rules r JOIN workspaces w ON w.id = r.workspace_id
			WHERE w.root = ? AND r.kind = ? ORDER BY r.id`, root, string(kind))
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
		return nil, fmt.Errorf("store: %s rules of %s: %w", kind, root, err)
	}
	return out, nil
}

// List returns every rule, by workspace root, then oldest first.
func (r Rules) List(ctx context.Context) ([]Rule, error) {
	var out []Rule
	err := r.db.read(func(db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT r.id, w.root, r.kind, r.pattern, r.created FROM rules r
			JOIN workspaces w ON w.id = r.workspace_id ORDER BY w.root, r.id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var x Rule
			var kind string
			var created int64
			if err := rows.Scan(&x.ID, &x.Root, &kind, &x.Pattern, &created); err != nil {
				return err
			}
			x.Kind, x.Created = RuleKind(kind), fromNanos(created)
			out = append(out, x)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list rules: %w", err)
	}
	return out, nil
}

// Revoke removes the rule id; an unknown id wraps ErrNotFound.
func (r Rules) Revoke(ctx context.Context, id int64) error {
	err := r.db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM rules WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: revoke rule %d: %w", id, err)
	}
	return nil
}

// RevokeAll removes every rule and says how many there were.
func (r Rules) RevokeAll(ctx context.Context) (int64, error) {
	var n int64
	err := r.db.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM rules`)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: revoke every rule: %w", err)
	}
	return n, nil
}
