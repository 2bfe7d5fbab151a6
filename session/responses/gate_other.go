//go:build !unix

package responses

import "net"

// sockOf: reads go through the net.Conn (no low-water mark here).
func sockOf(net.Conn) socket { return nil }
