// Package watch keeps, for one open workspace directory, the journal of
// what changed on disk, and turns it into the context delta: what changed
// since a conversation's last request, as diffs for the files the model has
// seen (its read set) and a list for the rest, capped in size.
//
// It owns:
//
//   - Watcher: the fsnotify watch of the directory tree, debounced (a quiet
//     delay and a maximum wait), with .gitignore and default ignore rules,
//     a snapshot that pairs renames by inode, paths hearth wrote itself
//     reported as such, and the journal of sequenced changes. Under load or
//     on error it gets coarser instead of losing information: an overflow
//     rescans; a watch limit or a failing watcher falls back to polling and
//     retries the watch. Created by New when the workspace is opened; Close
//     stops its loop goroutine and waits for it. Beside the journal it keeps
//     the event log (eventlog.go): the paths the OS's events named, ignored
//     ones and .git included, for the scan for planted repositories.
//   - Hub: one inotify instance shared by every Watcher of the process,
//     created by the daemon and closed after its Watchers.
//   - Delta and StaleFiles: the context delta built from the journal and the
//     read set, plain values for one request.
//   - Ignorer: the ignore rules, which grep in workspace shares; IsBinary,
//     SniffLen, MaxContent and ReadWholeMax, which the delta and read_file
//     must agree on.
//
// The directory is a Dir (workspace.Root implements it): every file is read
// through its handle, never by a name outside it.
//
// Imports: the standard library, fsnotify, go-udiff (the delta's diffs),
// go-git's gitignore and config formats, and golang.org/x/sys; no hearth
// package. workspace and the daemon import it; it never imports workspace.
package watch
