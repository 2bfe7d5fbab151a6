//go:build !unix

package daemon

import "os"

// lockSocket has no flock to take here (unix sockets on Windows are not
// hearth's transport); the stale-socket check alone decides.
func lockSocket(path string) (*os.File, error) { return nil, nil }
