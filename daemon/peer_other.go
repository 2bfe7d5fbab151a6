//go:build !linux && !darwin

package daemon

import (
	"net"
	"os"
)

// peerUID is unknown where peer credentials are not read (Linux and macOS
// read them: peer_linux.go, peer_darwin.go): the socket's 0600 mode guards.
func peerUID(net.Conn) (int, bool, error) { return 0, false, nil }

// ownerUID is unknown here: CheckSocketDir and Listen skip the owner checks.
func ownerUID(os.FileInfo) (int, bool) { return 0, false }
