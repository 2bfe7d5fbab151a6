//go:build !linux && !darwin

package safesocket

import (
	"errors"
	"net"
	"os"
)

// peerUID is unknown where peer credentials are not read (Linux and macOS
// read them: peer_linux.go, peer_darwin.go): the socket's 0600 mode guards.
func peerUID(net.Conn) (int, bool, error) { return 0, false, nil }

// ownerUID is unknown here: CheckDir and Listen skip the owner checks.
func ownerUID(os.FileInfo) (int, bool) { return 0, false }

// PeerProcess is unknown here: no connection is identified as a tool
// call's (the shell tool has no sandbox helper here either).
func PeerProcess(net.Conn) (Peer, bool, error) { return Peer{}, false, nil }

func (p Peer) Alive() bool { return true }
func (p Peer) Close()      {}

func ProcParent(int) (ProcInfo, error) { return ProcInfo{}, errors.New("no process table here") }
