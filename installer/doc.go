// Package installer makes hearth a per-user service and keeps its env file:
// it plans the files `hearth install` writes (a systemd --user unit on
// Linux, a launchd agent on macOS, and the env file that holds the API key),
// writes and removes them, asks the service manager to start, stop or
// report the service (Manager), and reads or edits the env file one
// variable at a time, keeping the others and its 0600 mode.
//
// A Plan is computed without touching the file system, so `hearth install
// --dry-run` and the tests see exactly what would be written; the env file
// is created only when missing and left in place by uninstall (it holds
// the user's key). Everything here is a plain value or a short-lived call:
// nothing runs in the background.
//
// Imports: no hearth package. It takes the paths it needs (the binary, the
// socket, the data directory) as plain values from cmd/hearth.
package installer
