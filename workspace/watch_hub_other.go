//go:build !linux

package workspace

import "log/slog"

// WatchHub is, off Linux, a stand-in: each Watcher gets its own fsnotify
// watcher (kqueue and ReadDirectoryChangesW have no per-user instance
// limit to share). Created by NewWatchHub, closed by Close; it holds
// nothing.
type WatchHub struct{}

// NewWatchHub returns a hub.
func NewWatchHub(log *slog.Logger) *WatchHub { return &WatchHub{} }

// Close does nothing: each Watcher closes its own watcher.
func (h *WatchHub) Close() error { return nil }

// Instances is 0: the hub holds no instance of its own.
func (h *WatchHub) Instances() int { return 0 }

func (h *WatchHub) subscribe() (eventSource, error) { return newFsnotifySource() }
