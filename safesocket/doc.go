// Package safesocket owns the daemon's unix socket as a file and the
// process at each end of it, as Tailscale's package of the same name does:
// where the socket may be placed (CanListen, CheckDir), listening on it
// with its lock, 0600 mode and stale-socket removal (Listen), a client's
// checked connection to it (Dial, Check), the credentials of the process
// that connected (CheckPeer, PeerProcess, ProcParent), and the lock on the
// data directory that says which process owns it (LockDataDir). It knows
// nothing of ACP, sessions or workspaces, and imports no hearth package.
//
// Lifetimes: the listener Listen returns holds the socket's lock file until
// it is closed; a Peer holds its pidfd (Linux) until Close; a DataDirLock
// is held from LockDataDir until Release or the process's exit. Errors and
// ProcInfo are values.
package safesocket
