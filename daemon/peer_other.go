//go:build !linux && !darwin

package daemon

import (
	"errors"
	"net"
	"os"
)

// peerUID is unknown where peer credentials are not read (Linux and macOS
// read them: peer_linux.go, peer_darwin.go): the socket's 0600 mode guards.
func peerUID(net.Conn) (int, bool, error) { return 0, false, nil }

// ownerUID is unknown here: CheckSocketDir and Listen skip the owner checks.
func ownerUID(os.FileInfo) (int, bool) { return 0, false }

// peerProcess is unknown here: no connection is identified as a tool
// call's (the shell tool has no sandbox helper here either).
func peerProcess(net.Conn) (peerProc, bool, error) { return peerProc{}, false, nil }

func (p peerProc) alive() bool { return true }
func (p peerProc) close()      {}

func procParent(int) (procInfo, error) { return procInfo{}, errors.New("no process table here") }
