//go:build linux || darwin

package safesocket

import (
	"os"
	"syscall"
)

// ownerUID is the uid that owns the file fi describes (where the peer
// checks run: on the other systems, peer_other.go).
func ownerUID(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
