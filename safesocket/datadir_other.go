//go:build !unix

package safesocket

import "os"

// flockNB has no flock to take here: like the socket's lock, the data
// directory's is not enforced on this platform (hearth's transport is a
// unix socket); the record is still written.
func flockNB(*os.File) (bool, error) { return true, nil }
