//go:build linux && cgo

package sandbox

// trapHook is what a cell's call tells of its file changes: the paths
// below root, to changes (nil: the call is not trapped).
type trapHook struct {
	root    string
	changes ChangeHook
}

// watch starts answering the trap's listener, when the started reply
// carried one (fds: what came after the pidfd); nil when the call is not
// trapped.
func (h trapHook) watch(fds []int) *trapWatch {
	if len(fds) == 0 {
		return nil
	}
	if h.changes == nil {
		closeFDs(fds)
		return nil
	}
	w, err := watchTrap(fds[0], h.root, h.changes.Change)
	if err != nil {
		return nil
	}
	h.changes.Trapped()
	return w
}
