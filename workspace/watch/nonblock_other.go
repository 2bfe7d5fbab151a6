//go:build !unix

package watch

// OpenNonblock is 0 where there are no FIFOs to block on.
const OpenNonblock = 0
