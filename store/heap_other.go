//go:build !linux || !cgo

package store

// keepHeap is glibc's tuning (heap_glibc.go); other C libraries keep theirs.
func keepHeap() {}
