//go:build !linux

package daemon

// syncObjects flushes the object store dir's entries. Commands' changes
// are trapped on Linux only, so no object waits for it here.
func syncObjects(dir string) { syncDir(dir) }
