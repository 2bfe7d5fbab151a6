package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// migrations holds the schema history, one file per version:
// migrations/NNNN_name.sql, numbered from 0001 without gaps. A released
// migration is never edited; changes go in a new file.
//
//go:embed migrations/*.sql
var migrations embed.FS

// migration is one schema step, read from the embedded files at Open.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads and orders the migration files in fsys, checking
// that their versions run 1..n without gaps or duplicates.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", base)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", base, err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the schema up to the newest migration in fsys. All pending
// migrations and the new PRAGMA user_version commit in one transaction, so a
// crash or a failing step leaves the database at its previous version. A
// database newer than this binary is refused rather than guessed at.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS) error {
	ms, err := loadMigrations(fsys)
	if err != nil {
		return err
	}
	known := len(ms)

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()

	// Read the version inside the (immediate) transaction so two daemons
	// racing on one file cannot both apply the same step.
	var current int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	if current > known {
		return fmt.Errorf("database schema version %d is newer than this hearth knows (%d): upgrade hearth, or move the database aside", current, known)
	}
	if current == known {
		return nil
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.name, err)
		}
	}
	// PRAGMA takes no bound parameters; known is an int we computed.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, known)); err != nil {
		return fmt.Errorf("migrate: set schema version %d: %w", known, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
