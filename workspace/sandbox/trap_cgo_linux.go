//go:build linux && cgo

package sandbox

/*
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
*/
import "C"

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// trapProgram is trapFilter as a struct sock_fprog in C memory, made once
// for the life of the process (the call's init reads it after the fork),
// or nil where there is no filter.
var trapProgram = sync.OnceValue(func() unsafe.Pointer {
	f := trapFilter()
	if len(f) == 0 {
		return nil
	}
	size := C.size_t(len(f)) * C.size_t(unsafe.Sizeof(unix.SockFilter{}))
	insns := C.malloc(size)
	C.memcpy(insns, unsafe.Pointer(&f[0]), size)
	prog := (*C.struct_sock_fprog)(C.malloc(C.size_t(unsafe.Sizeof(C.struct_sock_fprog{}))))
	prog.len = C.ushort(len(f))
	prog.filter = (*C.struct_sock_filter)(insns)
	return unsafe.Pointer(prog)
})
