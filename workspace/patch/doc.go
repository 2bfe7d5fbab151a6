// Package patch is the apply_patch format models are trained on: Grammar
// is its Lark grammar (the reference language, offered to the models that
// write it as a freeform tool's input), Parse reads a patch (Add File,
// Update File with @@ hunks, Move to, Delete File) into its file
// operations, taking every text of the grammar's language and forgiving
// more, ApplyHunks computes an updated file's new text
// from its old one, and FromShell and FromShellArgs recognise a shell
// command that is exactly an apply_patch invocation (a heredoc or one quoted
// argument, after an optional `cd DIR &&`, or the argv forms).
//
// It knows no files: the workspace resolves the paths, reads the old
// contents, and writes all the new ones or none. Its types are plain values
// that live as long as the call that parsed them.
//
// Imports: the standard library only; it imports no hearth package.
package patch
