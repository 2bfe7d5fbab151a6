//go:build !unix

package workspace

// openNonblock is 0 where there are no FIFOs to block on.
const openNonblock = 0
