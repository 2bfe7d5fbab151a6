// Package workspace is one open workspace directory as the model sees it:
// the Root every model-supplied path is confined to, and the tools the model
// may call on it: read_file, list_dir and grep, which only read, and
// write_file, edit_file, apply_patch and shell, which need the user's
// permission; Preview shows what one of those calls would do before it is
// allowed.
//
// The rules it follows:
//
//   - Confinement: every path from the model goes through Root.Resolve, which
//     evaluates symlinks itself, component by component, and refuses anything
//     whose final destination lies outside the root, including paths that do
//     not exist yet (writes need those), with a message the model can act on.
//     Then every file is opened, created, renamed and listed through the
//     Root's *os.Root handle, never by absolute name: the kernel resolves the
//     name again beneath the root, so a directory swapped for a symlink
//     leading out between the check and the use makes the call fail instead
//     of escaping (TestSymlinkSwapCampaign). Absolute paths from Resolve are
//     for what needs a path, such as the shell's working directory.
//   - Tools never fail in Go: bad arguments, missing files, paths outside the
//     root and cancellation all become a Result with IsError set and a
//     message the model can act on, because the model is the one who has to
//     correct the call.
//   - Tool specs are byte-identical on every call, so the session's requests
//     stay incremental.
//   - Writes are atomic (a temporary file in the same directory, created,
//     renamed and cleaned up through one handle on that directory), keep the
//     file's mode, and are reported to Toolset.OnWrite.
//   - RunVia and PreviewVia take an Editor: read_file, write_file and
//     edit_file then read and change the editor's buffers (unsaved changes
//     included) instead of the disk, after the same confinement checks.
//   - apply_patch takes the patch format models are trained on (Add File,
//     Update File with @@ hunks, Move to, Delete File) and applies it all or
//     not at all: every file's new content is computed, from the editor's
//     buffers when it offers them, before anything is written. A shell call
//     whose command is exactly an apply_patch invocation (a heredoc or one
//     quoted argument, after an optional `cd DIR &&`) is applied as
//     apply_patch instead of being run; its Preview says so (As).
//   - A shell command runs through workspace/sandbox (confined where the
//     OS allows, in its own process group, with the environment scrubbed of
//     credentials); nothing it starts outlives the call.
//
// Imports: workspace imports no other hearth package but its subpackages,
// which sit below it and never import it: workspace/patch (the apply_patch
// format), workspace/watch (the watcher, its journal and the context delta;
// Root is its watch.Dir) and workspace/sandbox (running a command
// confined, and where git's own files are). The daemon hands it to session
// through session's own interfaces. imports_test.go enforces this.
package workspace
