package watch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
)

// syncRequest asks the loop to flush now (after a full rescan if rescan),
// and to close done when the journal has it all; it lives for one Sync.
type syncRequest struct {
	rescan bool
	done   chan struct{}
}

// Sync returns once every change made on disk before the call is in the
// journal, with no debounce delay. While events come from the OS it
// creates a marker file in a private directory watched by the same inotify
// instance, whose event queue is ordered: when the marker's event arrives,
// every earlier event has too, and the loop flushes them. In polling mode
// it scans. The daemon calls it before computing a delta; tests call it
// instead of sleeping.
func (w *Watcher) Sync(ctx context.Context) error {
	select {
	case <-w.done:
		return ErrClosed
	default:
	}
	w.fenceMu.Lock()
	if w.polling || w.fenceDir == "" {
		w.fenceMu.Unlock()
		return w.request(ctx, true)
	}
	w.fenceSeq++
	n := w.fenceSeq
	ch := make(chan struct{})
	w.fences[n] = ch
	w.fenceMu.Unlock()

	name := filepath.Join(w.fenceDir, strconv.FormatUint(n, 10))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		w.dropFence(n)
		w.log.Warn("workspace: cannot create a sync marker; rescanning instead", "err", err)
		return w.request(ctx, true)
	}
	f.Close()
	defer os.Remove(name)
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		w.dropFence(n)
		return ctx.Err()
	case <-w.done:
		return ErrClosed
	}
}

// request has the loop flush (after a rescan if asked) and waits for it.
func (w *Watcher) request(ctx context.Context, rescan bool) error {
	req := syncRequest{rescan: rescan, done: make(chan struct{})}
	select {
	case w.syncReq <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.done:
		return ErrClosed
	}
	select {
	case <-req.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-w.done:
		return ErrClosed
	}
}

func (w *Watcher) dropFence(n uint64) {
	w.fenceMu.Lock()
	delete(w.fences, n)
	w.fenceMu.Unlock()
}

// completeFences releases the Syncs waiting on marker n and every earlier
// one (a marker numbered lower was handed out before n was, so the events
// it waits for came before n's too). Called by the loop after a flush.
func (w *Watcher) completeFences(n uint64) {
	w.fenceMu.Lock()
	defer w.fenceMu.Unlock()
	for k, ch := range w.fences {
		if k <= n {
			close(ch)
			delete(w.fences, k)
		}
	}
}

// takeFences hands every waiting marker to the caller and makes later Syncs
// ask the loop instead: the loop is about to stop watching, and closes the
// markers once a full rescan has journaled what their events would have.
func (w *Watcher) takeFences() []chan struct{} {
	w.fenceMu.Lock()
	defer w.fenceMu.Unlock()
	w.polling = true
	out := make([]chan struct{}, 0, len(w.fences))
	for k, ch := range w.fences {
		out = append(out, ch)
		delete(w.fences, k)
	}
	return out
}
