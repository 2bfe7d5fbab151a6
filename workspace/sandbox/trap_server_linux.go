//go:build linux && cgo

package sandbox

import "sync"

// trapHook is what a cell's call tells of its file changes: the paths
// below root, to changes (nil: the call is not trapped).
type trapHook struct {
	root    string
	changes ChangeHook
}

// watch starts answering the trap's listener, when the started reply
// carried one (fds: what came after the pidfd); nil when the call is not
// trapped. owner counts the watch's goroutine.
func (h trapHook) watch(fds []int, owner *sync.WaitGroup) *trapWatch {
	if len(fds) == 0 {
		return nil
	}
	if h.changes == nil {
		closeFDs(fds)
		return nil
	}
	w, err := watchTrap(fds[0], h.root, h.changes.Change, owner)
	if err != nil {
		return nil
	}
	h.changes.Trapped()
	return w
}
