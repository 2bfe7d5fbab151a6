package sandbox

// Network is whether the commands of one shell call may use the network.
// The daemon decides it per call from the session's mode
// (HEARTH_SHELL_NETWORK) and hands it over with the workspace's
// Toolset.WithNetwork; the zero Network allows it.
type Network struct {
	// Off cuts the commands off the network where the sandbox can
	// (NetworkEnforced): an empty network namespace, else Landlock's TCP
	// rules (ABI 4+); NetworkStatus says what that leaves open.
	Off bool
	// Why names what turned the network off ("full-auto mode"); the model
	// reads it in the note of a command that failed with the network off.
	Why string
}

// NetworkEnforced reports whether this process's shell tool can turn the
// network off — a sandbox helper is configured (Set), and user and
// network namespaces work or the kernel's Landlock restricts TCP (ABI 4+) —
// or says why it cannot.
func NetworkEnforced() (bool, string) {
	if !sandboxSupported {
		return false, networkUnsupported
	}
	sb := current()
	if len(sb.Helper) == 0 {
		return false, "shell commands run without the sandbox helper"
	}
	return kernelNetwork(sb.Helper)
}

// NetworkNote is appended to the output of a command that failed with the
// network off: the model learns why a download or a connection failed.
func NetworkNote(net Network) string {
	why := net.Why
	if why == "" {
		why = "this call"
	}
	return "[the network is off for commands in " + why + ": connections and listening sockets fail; the user can allow it with another mode or HEARTH_SHELL_NETWORK=on]"
}
