package watch

import (
	"time"
)

// maxRetryInterval caps the backoff between attempts to watch again.
const maxRetryInterval = time.Hour

// startPolling puts a Watcher that is not running yet in polling mode.
func (l *loop) startPolling(problem string) {
	if l.src != nil {
		l.src.Close()
		l.src = nil
	}
	l.limitErr = nil
	l.w.events.lose()
	l.w.takeFences()
	l.w.setMode("polling", problem)
	l.log.Warn("workspace: " + problem)
	l.pollTimer.Reset(l.opts.PollInterval)
	l.retryIn = l.opts.RetryInotify
	l.retryTimer.Reset(l.retryIn)
}

// enterPolling switches the running loop to polling: it stops the event
// source, rescans everything (events may have been lost on the way) and
// releases the Syncs that were waiting for a marker. Never a silent stop:
// problem says what happened, in Problem and in the log.
func (l *loop) enterPolling(problem string) {
	fences := l.w.takeFences()
	l.startPolling(problem)
	l.pend.rescanAll()
	l.flush()
	for _, ch := range fences {
		close(ch)
	}
	if l.opts.onMode != nil {
		l.opts.onMode("polling")
	}
}

// poll is one scan of polling mode. Scans are spaced so that they take at
// most 5% of the time, however large the tree.
func (l *loop) poll() {
	start := time.Now()
	l.pend.rescanAll()
	l.flush()
	l.pollTimer.Reset(max(l.opts.PollInterval, 20*time.Since(start)))
}

// retryWatch tries to watch every directory again (the user may have raised
// the limit). On success it rescans to cover the changes since the last
// scan and leaves polling mode; on failure it backs off.
func (l *loop) retryWatch() {
	src, err := l.opts.newSource()
	if err == nil && l.w.fenceDir != "" {
		err = src.Add(l.w.fenceDir)
	}
	if err == nil {
		for dir := range l.tree {
			if err = src.Add(l.abs(dir)); err != nil && dir != "" && vanished(err) {
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
		l.retryIn = min(2*l.retryIn, maxRetryInterval)
		l.retryTimer.Reset(l.retryIn)
		l.log.Debug("workspace: still cannot watch; polling", "root", l.root.Path(), "err", err, "retry_in", l.retryIn)
		return
	}
	l.src = src
	l.pollTimer.Stop()
	l.pend.rescanAll()
	l.flush()
	if l.src == nil {
		return // the rescan met the limit again and went back to polling
	}
	l.w.events.lose() // what changed while polling came with no event
	l.w.fenceMu.Lock()
	l.w.polling = false
	l.w.fenceMu.Unlock()
	l.w.setMode(watchMode, "")
	l.log.Info("workspace: watching for changes again", "root", l.root.Path())
	if l.opts.onMode != nil {
		l.opts.onMode(watchMode)
	}
}

// setMode records the loop's mode and why, for Mode and Problem.
func (w *Watcher) setMode(mode, problem string) {
	w.fenceMu.Lock()
	w.mode, w.problem = mode, problem
	w.fenceMu.Unlock()
}
