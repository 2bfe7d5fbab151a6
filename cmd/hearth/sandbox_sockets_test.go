package main

import (
	"slices"
	"testing"
)

// TestSandboxSockets: HEARTH_SANDBOX_SOCKETS is a PATH-like list whose
// $VARIABLES are expanded; empty and relative entries are dropped.
func TestSandboxSockets(t *testing.T) {
	t.Setenv("HEARTH_TEST_AGENT", "/run/user/7/ssh.sock")
	got := sandboxSockets("$HEARTH_TEST_AGENT::relative.sock:/var/run/docker.sock/")
	if want := []string{"/run/user/7/ssh.sock", "/var/run/docker.sock"}; !slices.Equal(got, want) {
		t.Errorf("sandboxSockets = %q, want %q", got, want)
	}
	if got := sandboxSockets(""); got != nil {
		t.Errorf("sandboxSockets(\"\") = %q", got)
	}
}
