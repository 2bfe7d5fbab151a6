//go:build linux && !amd64 && !arm64

package sandbox

// trapArch: no trap on this architecture (trapFilter returns none).
const trapArch = 0

var trapSyscalls []trapSyscall
