//go:build !unix

package sandbox

import (
	"io"
	"os"
)

// executableFile reports whether p is a regular file with an execute bit.
func executableFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// startsRunnable reports whether the file p starts as an ELF binary or a
// #! script does.
func startsRunnable(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [4]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return false
	}
	return string(head[:]) == "\x7fELF" || string(head[:2]) == "#!"
}
