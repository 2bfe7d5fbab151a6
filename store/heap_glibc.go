//go:build linux && cgo

package store

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static void keep_heap(void) { mallopt(M_TRIM_THRESHOLD, 64 << 20); }
#else
static void keep_heap(void) {}
#endif
*/
import "C"

// keepHeap stops glibc from handing the top of SQLite's heap back to the
// kernel after every free. With the default (dynamic) trim threshold, each
// commit's buffers were returned with madvise and faulted in again by the
// next one: a TLB shootdown on every core, about half of a round trip's
// commit (store.BenchmarkInsertRequestAfter: 555 → 300 µs). Up to 64 MiB of
// freed memory stays with the process instead.
func keepHeap() { C.keep_heap() }
