//go:build !linux

package watch

import "log/slog"

// Hub is, off Linux, a stand-in: each Watcher gets its own fsnotify
// watcher (kqueue and ReadDirectoryChangesW have no per-user instance
// limit to share). Created by NewHub, closed by Close; it holds
// nothing.
type Hub struct{}

// NewHub returns a hub.
func NewHub(log *slog.Logger) *Hub { return &Hub{} }

// Close does nothing: each Watcher closes its own watcher.
func (h *Hub) Close() error { return nil }

// Instances is 0: the hub holds no instance of its own.
func (h *Hub) Instances() int { return 0 }

func (h *Hub) subscribe() (eventSource, error) { return newFsnotifySource() }
