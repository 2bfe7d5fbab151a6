package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Workspace is a project root the daemon has served. The row lives as long
// as the database; a Workspace value is a snapshot read at one moment.
type Workspace struct {
	ID      int64
	Root    string
	Created time.Time
}

// EnsureWorkspace returns the workspace for root, creating it on first use.
// root is stored as given: the caller canonicalises it.
func (db *DB) EnsureWorkspace(ctx context.Context, root string) (Workspace, error) {
	var w Workspace
	err := db.write(ctx, func(tx *wtx) error {
		var err error
		w, err = ensureWorkspace(ctx, tx, root)
		return err
	})
	if err != nil {
		return Workspace{}, fmt.Errorf("store: ensure workspace %q: %w", root, err)
	}
	return w, nil
}

// ensureWorkspace is EnsureWorkspace inside a caller's transaction.
func ensureWorkspace(ctx context.Context, tx *wtx, root string) (Workspace, error) {
	if root == "" {
		return Workspace{}, errors.New("empty root")
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO workspaces (root, created) VALUES (?, ?) ON CONFLICT (root) DO NOTHING`,
		root, nanos(now())); err != nil {
		return Workspace{}, err
	}
	w := Workspace{Root: root}
	var created int64
	if err := tx.QueryRowContext(ctx,
		`SELECT id, created FROM workspaces WHERE root = ?`, root).Scan(&w.ID, &created); err != nil {
		return Workspace{}, err
	}
	w.Created = fromNanos(created)
	return w, nil
}
