package watch

import (
	"context"
	"sort"
)

// StaleFiles returns the read-set files whose content on disk is no longer
// what the model saw (or that are gone): changes made while no Watcher ran,
// such as while the daemon was stopped. A file is hashed as it streams;
// one over ReadWholeMax, which read_file does not hash, counts as stale.
func StaleFiles(root Dir, seen map[string]Seen) []string {
	var out []string
	for p, s := range seen {
		f, err := readDeltaFile(root, p)
		if s.Hash == GoneHash && err == errDeltaGone {
			continue // deleted by the model, still gone
		}
		if err != nil || f.hash == "" || f.hash != s.Hash {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// DeltaWith is Delta with the paths in also treated as modified (the
// result of StaleFiles, on a session's first delta after a restart).
func (w *Watcher) DeltaWith(ctx context.Context, since uint64, seen map[string]Seen, caps DeltaCaps, also []string) (Delta, error) {
	if err := w.Sync(ctx); err != nil {
		return Delta{}, err
	}
	changes, next, overflow := w.Changes(since)
	have := make(map[string]bool, len(changes))
	for _, c := range changes {
		have[c.Path] = true
	}
	for _, p := range also {
		if !have[p] {
			changes = append(changes, Change{Op: Modified, Path: p})
		}
	}
	sort.Slice(changes, func(i, k int) bool { return changes[i].Path < changes[k].Path })
	d := buildDelta(w.root, changes, overflow, seen, caps)
	d.Next = next
	return d, nil
}
