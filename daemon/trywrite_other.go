//go:build !unix

package daemon

import "io"

// rawSocket: editors' connections are written by their writer alone here.
type rawSocket = any

func rawSocketOf(io.ReadWriteCloser) rawSocket { return nil }

// TryWrite cannot try here (rpc.TryWriter).
func (w deadlineWriter) TryWrite([]byte) (int, bool, error) { return 0, false, nil }
