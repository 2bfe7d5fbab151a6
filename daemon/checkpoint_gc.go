package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hearthd/hearth/store"
)

// Default checkpoint budget of a workspace (Config.CheckpointBytes,
// CheckpointTurns): the oldest checkpoints go first past it.
const (
	defaultCheckpointBytes = 512 << 20
	defaultCheckpointTurns = 1000
)

// checkpointKeeper keeps the checkpoint store within its budget and free
// of objects no row needs. Rows go first, in a transaction; the objects
// they kept are unlinked after, when no row needs them any more; a crash
// between leaves orphans, which the sweep at start removes with any
// temporary file a put left. Made by New; lives as long as its Daemon.
type checkpointKeeper struct {
	// mu is held shared while a pre-image is put and its row recorded
	// (turnRecorder.before), and exclusively while objects are looked up
	// and unlinked: an object a new row dedups to is never unlinked
	// between the two.
	mu      sync.RWMutex
	db      *store.DB
	objects objectStore
	log     *slog.Logger
}

// trim keeps the checkpoints of sessionID's workspace within b, saying in
// the log what it dropped.
func (k *checkpointKeeper) trim(ctx context.Context, sessionID string, b store.CheckpointBudget) error {
	t, err := k.db.Checkpoints().Trim(ctx, sessionID, b)
	if err != nil || t.Turns == 0 {
		return err
	}
	k.log.Info("the oldest checkpoints were dropped to keep the workspace's checkpoints within their budget",
		"session", sessionID, "turns", t.Turns, "max_turns", b.Turns, "max_bytes", b.Bytes)
	return k.unlink(ctx, t.Hashes)
}

// unlink removes those of hashes' objects that no row keeps.
func (k *checkpointKeeper) unlink(ctx context.Context, hashes []string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	gone, err := k.db.Checkpoints().Unreferenced(ctx, hashes)
	if err != nil {
		return err
	}
	for _, h := range gone {
		if err := os.Remove(filepath.Join(k.objects.dir, h)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove the checkpoint object %s: %w", h, err)
		}
	}
	return nil
}

// sweep removes the objects no row keeps and the temporary files of puts
// a crash cut short: at start, and after a session is deleted.
func (k *checkpointKeeper) sweep(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	entries, err := os.ReadDir(k.objects.dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list the checkpoint objects: %w", err)
	}
	keep, err := k.db.Checkpoints().Referenced(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		if keep[e.Name()] && !strings.HasPrefix(e.Name(), ".tmp-") {
			continue
		}
		if err := os.Remove(filepath.Join(k.objects.dir, e.Name())); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove an orphan checkpoint object: %w", err)
		}
		n++
	}
	if n > 0 {
		k.log.Info("checkpoint objects no checkpoint needs removed", "count", n)
	}
	return nil
}

// checkpointBudget is the budget of each workspace's checkpoints.
func (c Config) checkpointBudget() store.CheckpointBudget {
	b := store.CheckpointBudget{Bytes: c.CheckpointBytes, Turns: c.CheckpointTurns}
	if b.Bytes <= 0 {
		b.Bytes = defaultCheckpointBytes
	}
	if b.Turns <= 0 {
		b.Turns = defaultCheckpointTurns
	}
	return b
}

// droppedLine says, after an undo's or a rewind's message, that the
// session's checkpoints after key that it would have put back were
// dropped for the budget ("" when none was).
func droppedLine(ctx context.Context, db *store.DB, sessionID string, after int64) string {
	through, err := db.Checkpoints().TrimmedThrough(ctx, sessionID)
	if err != nil || through <= after {
		return ""
	}
	return " The oldest checkpoints of this session were dropped to keep the workspace's checkpoints within their budget " +
		"(HEARTH_CHECKPOINT_SIZE, HEARTH_CHECKPOINT_TURNS): the files those turns changed cannot be put back."
}
