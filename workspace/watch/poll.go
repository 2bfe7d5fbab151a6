package watch

import (
	"time"
)

// maxRetryInterval caps the backoff between attempts to watch again.
const maxRetryInterval = time.Hour

// startPolling puts a Watcher that is not running yet in polling mode.
func (w *Watcher) startPolling(problem string) {
	if w.src != nil {
		w.src.Close()
		w.src = nil
	}
	w.limitErr = nil
	w.takeFences()
	w.setMode("polling", problem)
	w.log.Warn("workspace: " + problem)
	w.pollTimer.Reset(w.opts.PollInterval)
	w.retryIn = w.opts.RetryInotify
	w.retryTimer.Reset(w.retryIn)
}

// enterPolling switches the running loop to polling: it stops the event
// source, rescans everything (events may have been lost on the way) and
// releases the Syncs that were waiting for a marker. Never a silent stop:
// problem says what happened, in Problem and in the log.
func (w *Watcher) enterPolling(problem string) {
	fences := w.takeFences()
	w.startPolling(problem)
	w.pend.rescanAll()
	w.flush()
	for _, ch := range fences {
		close(ch)
	}
	w.notifyMode("polling")
}

// poll is one scan of polling mode. Scans are spaced so that they take at
// most 5% of the time, however large the tree.
func (w *Watcher) poll() {
	start := time.Now()
	w.pend.rescanAll()
	w.flush()
	w.pollTimer.Reset(max(w.opts.PollInterval, 20*time.Since(start)))
}

// retryWatch tries to watch every directory again (the user may have raised
// the limit). On success it rescans to cover the changes since the last
// scan and leaves polling mode; on failure it backs off.
func (w *Watcher) retryWatch() {
	src, err := w.opts.newSource()
	if err == nil && w.fenceDir != "" {
		err = src.Add(w.fenceDir)
	}
	if err == nil {
		for dir := range w.tree {
			if err = src.Add(w.abs(dir)); err != nil && dir != "" && vanished(err) {
				err = nil // removed since the last scan; the rescan below drops it
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		if src != nil {
			src.Close()
		}
		w.retryIn = min(2*w.retryIn, maxRetryInterval)
		w.retryTimer.Reset(w.retryIn)
		w.log.Debug("workspace: still cannot watch; polling", "root", w.root.Path(), "err", err, "retry_in", w.retryIn)
		return
	}
	w.src = src
	w.pollTimer.Stop()
	w.pend.rescanAll()
	w.flush()
	if w.src == nil {
		return // the rescan met the limit again and went back to polling
	}
	w.fenceMu.Lock()
	w.polling = false
	w.fenceMu.Unlock()
	w.setMode(watchMode, "")
	w.log.Info("workspace: watching for changes again", "root", w.root.Path())
	w.notifyMode(watchMode)
}

func (w *Watcher) setMode(mode, problem string) {
	w.fenceMu.Lock()
	w.mode, w.problem = mode, problem
	w.fenceMu.Unlock()
}

func (w *Watcher) notifyMode(mode string) {
	if w.opts.onMode != nil {
		w.opts.onMode(mode)
	}
}
