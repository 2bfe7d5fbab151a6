package sandbox

// Access is what one command may write. The daemon decides it per call:
// the mode's own for most, nothing for a command that only reads, more
// for one the user let out (escalated). The zero Access is the mode's.
type Access int

const (
	// AccessWorkspace: the workspace, the temp dir and the user's caches
	// (Config.Write), as every mode's commands.
	AccessWorkspace Access = iota
	// AccessReadOnly: no write grant at all (the few device files every
	// shell writes, /dev/null and the like, aside), the workspace's /tmp
	// included: for a command read as read-only, run without asking.
	AccessReadOnly
	// AccessEscalated: wherever the user may write, but hearth's own
	// directories (Config.Deny) and the repository's git configuration
	// and hooks, which stay as for any command: for one command the user
	// allowed out of the mode's confinement. Its pid namespace, process
	// bound and hidden sockets stay too.
	AccessEscalated
)

// The helper's flags for Access: no write grant at all, or a write grant
// on / (split around the denied directories, as the read grant is).
const (
	readOnlyFlag      = "--read-only"
	writeAnywhereFlag = "--write-anywhere"
)

// flag is a's helper flag, "" for AccessWorkspace.
func (a Access) flag() string {
	switch a {
	case AccessReadOnly:
		return readOnlyFlag
	case AccessEscalated:
		return writeAnywhereFlag
	}
	return ""
}

// String names a for logs and tests.
func (a Access) String() string {
	switch a {
	case AccessReadOnly:
		return "read-only"
	case AccessEscalated:
		return "escalated"
	}
	return "workspace"
}
