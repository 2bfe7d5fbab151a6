//go:build !unix

package safesocket

import (
	"net"
	"os"
)

// lockSocket has no flock to take here (unix sockets on Windows are not
// hearth's transport); the stale-socket check alone decides.
func lockSocket(path string) (*os.File, error) { return nil, nil }

// listenPrivate binds path; its permissions are set by Listen's chmod.
func listenPrivate(path string) (net.Listener, error) { return net.Listen("unix", path) }
